/**
 * The string formats Cairn adds to JSON Schema (registered with Ajv in plugins/validation.ts),
 * named in schemas as `format: '<name>'` and listed in the OpenAPI document as such.
 */

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?([Zz]|[+-](\d{2}):?(\d{2}))?)?$/;

const daysIn = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/**
 * `calendar-date`: an ISO 8601 date or date-time as date filters take it (`2026-02-28`,
 * `2026-02-28T10:00`, `2026-02-28 10:00:00.5+01:00`), and a real one: month 1-12, a day the
 * month has (leap years counted), hours 0-23, minutes and seconds 0-59, an offset up to ±23:59
 * (decisions H17). `2026-02-30`, `2026-13-45`, `T25:61` and `+99:99` are refused.
 */
export function isCalendarDate(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return false;
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || (m[6] !== undefined && Number(m[6]) > 59))) return false;
  if (m[8] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return false;
  return true;
}

/** Any control character or whitespace a browser strips or ignores inside a URL scheme. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const IGNORED_IN_SCHEME = /[\u0000-\u0020\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
export const CONTROL_OR_SPACE = /[\u0000-\u001f\u007f\s]/;

/**
 * `http-url`: an absolute http(s) URL (decisions H18). Checked on the text as a browser reads it:
 * leading spaces and control characters dropped and tabs or newlines inside the scheme ignored,
 * so `  JaVaScRiPt:`, `java\tscript:`, `data:` and `vbscript:` can never pass.
 */
export function isHttpUrl(value: string): boolean {
  const text = value.replace(IGNORED_IN_SCHEME, '');
  if (!/^https?:\/\//i.test(text) || /\s/.test(value.trim())) return false;
  try {
    const url = new URL(value.trim());
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * `url-or-path`: an absolute http(s) URL, or a path on the site itself (`/images/a.png`): one
 * leading slash, never `//host` (a protocol-relative URL to another host) or `/\\host`.
 */
export function isUrlOrPath(value: string): boolean {
  if (value.startsWith('/')) return !/^\/[/\\]/.test(value) && !CONTROL_OR_SPACE.test(value);
  return isHttpUrl(value);
}

export const FORMATS = { 'calendar-date': isCalendarDate, 'http-url': isHttpUrl, 'url-or-path': isUrlOrPath } as const;

/** What a value failing each format is told (errors plugin). */
export const FORMAT_MESSAGES: Record<string, string> = {
  'calendar-date': 'must be a real ISO 8601 date or date-time (YYYY-MM-DD, optionally THH:MM[:SS] and an offset)',
  'http-url': 'must be an absolute http:// or https:// URL',
  'url-or-path': 'must be an http:// or https:// URL or a path starting with /',
  'date-time': 'must be a real ISO 8601 date-time with an offset',
  uri: 'must be a URL',
};
