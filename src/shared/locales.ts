/**
 * The locale catalog behind GET /site/settings/locales and the language settings
 * (`{ code, label, flag, direction }`). Labels come from ICU (Intl.DisplayNames), so they are
 * correct for every code; the list names the languages a site is likely to publish in.
 */
const CODES = [
  'af',
  'am',
  'ar',
  'az',
  'be',
  'bg',
  'bn',
  'bs',
  'ca',
  'cs',
  'cy',
  'da',
  'de',
  'de-AT',
  'de-CH',
  'el',
  'en',
  'en-AU',
  'en-CA',
  'en-GB',
  'en-IE',
  'en-NZ',
  'en-US',
  'es',
  'es-419',
  'es-AR',
  'es-MX',
  'et',
  'eu',
  'fa',
  'fi',
  'fil',
  'fr',
  'fr-BE',
  'fr-CA',
  'fr-CH',
  'ga',
  'gl',
  'gu',
  'he',
  'hi',
  'hr',
  'hu',
  'hy',
  'id',
  'is',
  'it',
  'ja',
  'ka',
  'kk',
  'km',
  'kn',
  'ko',
  'ky',
  'lb',
  'lo',
  'lt',
  'lv',
  'mk',
  'ml',
  'mn',
  'mr',
  'ms',
  'mt',
  'my',
  'nb',
  'ne',
  'nl',
  'nl-BE',
  'nn',
  'pa',
  'pl',
  'ps',
  'pt',
  'pt-BR',
  'pt-PT',
  'ro',
  'ru',
  'si',
  'sk',
  'sl',
  'sq',
  'sr',
  'sv',
  'sw',
  'ta',
  'te',
  'th',
  'tr',
  'uk',
  'ur',
  'uz',
  'vi',
  'zh',
  'zh-Hans',
  'zh-Hant',
  'zh-TW',
  'zh-HK',
  'zu',
] as const;

/** The country whose flag stands for a language without a region subtag. */
const DEFAULT_REGION: Record<string, string> = {
  af: 'ZA',
  am: 'ET',
  ar: 'SA',
  az: 'AZ',
  be: 'BY',
  bg: 'BG',
  bn: 'BD',
  bs: 'BA',
  ca: 'AD',
  cs: 'CZ',
  cy: 'GB',
  da: 'DK',
  de: 'DE',
  el: 'GR',
  en: 'GB',
  es: 'ES',
  et: 'EE',
  eu: 'ES',
  fa: 'IR',
  fi: 'FI',
  fil: 'PH',
  fr: 'FR',
  ga: 'IE',
  gl: 'ES',
  gu: 'IN',
  he: 'IL',
  hi: 'IN',
  hr: 'HR',
  hu: 'HU',
  hy: 'AM',
  id: 'ID',
  is: 'IS',
  it: 'IT',
  ja: 'JP',
  ka: 'GE',
  kk: 'KZ',
  km: 'KH',
  kn: 'IN',
  ko: 'KR',
  ky: 'KG',
  lb: 'LU',
  lo: 'LA',
  lt: 'LT',
  lv: 'LV',
  mk: 'MK',
  ml: 'IN',
  mn: 'MN',
  mr: 'IN',
  ms: 'MY',
  mt: 'MT',
  my: 'MM',
  nb: 'NO',
  ne: 'NP',
  nl: 'NL',
  nn: 'NO',
  pa: 'IN',
  pl: 'PL',
  ps: 'AF',
  pt: 'PT',
  ro: 'RO',
  ru: 'RU',
  si: 'LK',
  sk: 'SK',
  sl: 'SI',
  sq: 'AL',
  sr: 'RS',
  sv: 'SE',
  sw: 'KE',
  ta: 'IN',
  te: 'IN',
  th: 'TH',
  tr: 'TR',
  uk: 'UA',
  ur: 'PK',
  uz: 'UZ',
  vi: 'VN',
  zh: 'CN',
  zu: 'ZA',
};
const RTL = new Set(['ar', 'he', 'fa', 'ur', 'ps', 'yi', 'dv', 'ckb', 'sd', 'ug']);

export interface LocaleInfo {
  code: string;
  label: string;
  flag: string;
  direction: 'ltr' | 'rtl';
}

/** `make`'s value, made on the first call (PF18: nothing of ICU is looked up when the module loads). */
function once<T>(make: () => T): () => T {
  let made: { value: T } | null = null;
  return () => (made ??= { value: make() }).value;
}

const displayNames = once(() => new Intl.DisplayNames(['en'], { type: 'language' }));

/** Canonical BCP 47 form (decisions G9), or null when the tag is not valid. */
export function canonicalLocale(tag: string): string | null {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag.trim());
    return canonical ?? null;
  } catch {
    return null;
  }
}

function flagOf(region: string | undefined): string {
  if (!region || !/^[A-Z]{2}$/.test(region)) return '🌐';
  return String.fromCodePoint(...[...region].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
}

export function localeInfo(code: string): LocaleInfo {
  const loc = new Intl.Locale(code);
  const region = loc.region ?? DEFAULT_REGION[loc.language];
  return {
    code,
    label: displayNames().of(code) ?? code,
    flag: flagOf(region),
    direction: RTL.has(loc.language) ? 'rtl' : 'ltr',
  };
}

// The catalog and the timezones are made on first use, not when the module loads: ICU's display
// names and zone list cost every start about 30 ms (issue 37 item 5, decisions PF18).

/** The locale catalog, in CODES order. */
export const localeCatalog = once((): readonly LocaleInfo[] => CODES.map((c) => localeInfo(canonicalLocale(c)!)));
const catalogCodes = once(() => new Set(localeCatalog().map((l) => l.code)));

/** Whether a canonical code is in the catalog. */
export const inLocaleCatalog = (code: string): boolean => catalogCodes().has(code);

/** IANA timezone identifiers (GET /site/settings/timezones); UTC is always included. */
export const timezones = once((): readonly string[] => [...new Set(['UTC', ...Intl.supportedValuesOf('timeZone')])].sort());
const lowerCaseTimezones = once(() => new Set(timezones().map((t) => t.toLowerCase())));

export function isTimezone(value: string): boolean {
  if (lowerCaseTimezones().has(value.toLowerCase())) return true;
  try {
    // Aliases (e.g. Europe/Kiev) that ICU accepts are valid IANA identifiers too.
    new Intl.DateTimeFormat('en', { timeZone: value });
    return value.includes('/') || value === 'UTC';
  } catch {
    return false;
  }
}
