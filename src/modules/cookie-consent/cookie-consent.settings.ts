import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Type, type Static } from 'typebox';
import { now, parseJson, toJson } from '../../db/json.js';
import type { Db } from '../../db/types.js';
import { AppError, invalid, issuesError } from '../../shared/errors.js';
import { Nullable, Timestamp, UrlOrPath } from '../../shared/schemas.js';
import { getSiteLocales, resolveLocale, type SiteLocales } from '../../shared/site-locales.js';
import * as repo from './cookie-consent.repository.js';

/**
 * The banner's settings per site (decisions CC1, CC2): what the PUT takes, the defaults a site
 * has before its first PUT, the rules a PUT must pass, and when `revision` goes up.
 */
export const MODES = ['opt-in', 'opt-out', 'notice-only'] as const;
export const POSITIONS = ['bottom', 'top', 'center', 'bottom-left', 'bottom-right'] as const;
export const LAYOUTS = ['banner', 'modal', 'floating'] as const;
export const THEMES = ['light', 'dark', 'auto'] as const;
const Enum = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values], description: values.join(', ') });

const require = createRequire(import.meta.url);
export const BANNER_CSS_FILE = require.resolve('vanilla-cookieconsent/dist/cookieconsent.css');
/** The CSS variables the banner library defines: the only keys `styleOverrides` takes. */
export const STYLE_VARIABLES: ReadonlySet<string> = new Set(readFileSync(BANNER_CSS_FILE, 'utf8').match(/--cc-[a-z0-9-]+(?=\s*:)/g) ?? []);
/** What a style value may not hold: a way out of the declaration, or a way to load something. */
const UNSAFE_STYLE = /[;{}<>\\]|url\s*\(|expression\s*\(|@import/i;

const KEY_PATTERN = '^[a-z][a-z0-9_-]{0,49}$';
const Key = Type.String({ pattern: KEY_PATTERN, description: 'a-z, 0-9, _ and -, starting with a letter, at most 50' });
const Text = (min: number, max: number) => Type.String({ minLength: min, maxLength: max });

const TextsSchema = Type.Object({
  title: Type.String(),
  description: Type.String(),
  acceptAll: Type.String(),
  rejectAll: Type.String(),
  customize: Type.String(),
  save: Type.String(),
  preferencesTitle: Type.String(),
  preferencesDescription: Type.String(),
});
export type Texts = Static<typeof TextsSchema>;
/** Partial texts; unknown keys are dropped (the validator removes what `additionalProperties: false` excludes). */
const TextsInput = Type.Object(
  {
    title: Type.Optional(Text(1, 200)),
    description: Type.Optional(Text(1, 2000)),
    acceptAll: Type.Optional(Text(1, 50)),
    rejectAll: Type.Optional(Text(1, 50)),
    customize: Type.Optional(Text(1, 50)),
    save: Type.Optional(Text(1, 50)),
    preferencesTitle: Type.Optional(Text(0, 200)),
    preferencesDescription: Type.Optional(Text(0, 2000)),
  },
  { additionalProperties: false },
);

const CategorySchema = Type.Object({
  key: Type.String(),
  label: Type.String(),
  description: Nullable(Type.String()),
  required: Type.Boolean({ description: 'Always accepted; the visitor cannot turn it off' }),
  defaultEnabled: Type.Boolean({ description: 'On before a choice in opt-out mode' }),
});
const CategoryInput = Type.Object({
  key: Key,
  label: Text(1, 100),
  description: Type.Optional(Nullable(Text(0, 1000))),
  required: Type.Optional(Type.Boolean()),
  defaultEnabled: Type.Optional(Type.Boolean()),
});
const CookieSchema = Type.Object({ name: Type.String(), duration: Type.String(), description: Nullable(Type.String()) });
const ServiceSchema = Type.Object({
  key: Type.String(),
  name: Type.String(),
  category: Type.String(),
  description: Nullable(Type.String()),
  cookies: Type.Array(CookieSchema),
});
const ServiceInput = Type.Object({
  key: Key,
  name: Text(1, 100),
  category: Type.String({ minLength: 1, maxLength: 50, description: 'A category key' }),
  description: Type.Optional(Nullable(Text(0, 1000))),
  cookies: Type.Optional(
    Type.Array(Type.Object({ name: Text(1, 100), duration: Text(1, 50), description: Type.Optional(Nullable(Text(0, 500))) }), { maxItems: 50 }),
  ),
});
const Labels = (name: 'label' | 'name') =>
  Type.Record(Type.String(), Type.Object({ [name]: Type.Optional(Text(1, 100)), description: Type.Optional(Text(0, 1000)) }, { additionalProperties: false }), {
    maxProperties: 100,
  });
const TranslationSchema = Type.Object(
  {
    texts: Type.Optional(TextsInput),
    categories: Type.Optional(Labels('label')),
    services: Type.Optional(Labels('name')),
  },
  { additionalProperties: false },
);
const Translations = Type.Record(Type.String(), TranslationSchema, {
  maxProperties: 50,
  description: 'Per enabled locale: texts, category labels and service names',
});
type Translation = Static<typeof TranslationSchema>;
const StyleOverrides = Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 100 }), {
  maxProperties: 50,
  description: "The banner library's `--cc-*` CSS variables; values without `;{}<>\\`, `url(`, `expression(` or `@import`",
});

export const Settings = Type.Object({
  enabled: Type.Boolean(),
  mode: Enum(MODES),
  showRejectAll: Type.Boolean(),
  position: Enum(POSITIONS),
  layout: Enum(LAYOUTS),
  theme: Enum(THEMES),
  primaryColor: Type.String(),
  borderRadius: Type.Integer(),
  fontSize: Type.Integer(),
  showSettingsButton: Type.Boolean(),
  styleOverrides: Type.Record(Type.String(), Type.String()),
  texts: TextsSchema,
  services: Type.Array(ServiceSchema),
  privacyPolicyUrl: Nullable(Type.String()),
  cookiePolicyUrl: Nullable(Type.String()),
  categories: Type.Array(CategorySchema),
  translations: Type.Record(Type.String(), TranslationSchema),
  logRetentionDays: Type.Integer({ description: 'Days records are kept; 0 keeps them for ever' }),
  revision: Type.Integer({ description: "Goes up when the categories, a category's `required` or the services change, so banners ask again" }),
  updatedAt: Nullable(Timestamp),
});
export type Settings = Static<typeof Settings>;

export const SettingsUpdate = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    mode: Type.Optional(Enum(MODES)),
    showRejectAll: Type.Optional(Type.Boolean()),
    position: Type.Optional(Enum(POSITIONS)),
    layout: Type.Optional(Enum(LAYOUTS)),
    theme: Type.Optional(Enum(THEMES)),
    primaryColor: Type.Optional(Type.String({ pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$', description: '#rgb or #rrggbb' })),
    borderRadius: Type.Optional(Type.Integer({ minimum: 0, maximum: 50, description: 'px, 0-50' })),
    fontSize: Type.Optional(Type.Integer({ minimum: 11, maximum: 17, description: 'px, 11-17' })),
    showSettingsButton: Type.Optional(Type.Boolean()),
    styleOverrides: Type.Optional(StyleOverrides),
    texts: Type.Optional(TextsInput),
    services: Type.Optional(Type.Array(ServiceInput, { maxItems: 100 })),
    privacyPolicyUrl: Type.Optional(Nullable(UrlOrPath())),
    cookiePolicyUrl: Type.Optional(Nullable(UrlOrPath())),
    categories: Type.Optional(Type.Array(CategoryInput, { minItems: 1, maxItems: 20 })),
    translations: Type.Optional(Translations),
    logRetentionDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650, description: 'Days records are kept, 0-3650; 0 keeps them for ever' })),
  },
  { minProperties: 1, additionalProperties: false },
);
type SettingsUpdate = Static<typeof SettingsUpdate>;

export const DEFAULT_TEXTS: Texts = {
  title: 'We use cookies',
  description: 'We use cookies to make this site work and, with your consent, to understand how it is used and to show relevant ads.',
  acceptAll: 'Accept all',
  rejectAll: 'Reject all',
  customize: 'Customize',
  save: 'Save preferences',
  preferencesTitle: 'Cookie preferences',
  preferencesDescription: 'Choose which cookies this site may use. Necessary cookies are always on.',
};

type Stored = Omit<Settings, 'enabled' | 'revision' | 'logRetentionDays' | 'updatedAt'>;
const DEFAULTS: Stored = {
  mode: 'opt-in',
  showRejectAll: true,
  position: 'bottom',
  layout: 'banner',
  theme: 'light',
  primaryColor: '#2563eb',
  borderRadius: 8,
  fontSize: 14,
  showSettingsButton: true,
  styleOverrides: {},
  texts: DEFAULT_TEXTS,
  services: [],
  privacyPolicyUrl: null,
  cookiePolicyUrl: null,
  categories: [
    { key: 'necessary', label: 'Necessary', description: 'Needed for the site to work.', required: true, defaultEnabled: true },
    { key: 'analytics', label: 'Analytics', description: 'Help us understand how the site is used.', required: false, defaultEnabled: false },
    { key: 'marketing', label: 'Marketing', description: 'Used to show relevant ads.', required: false, defaultEnabled: false },
  ],
  translations: {},
};
export const DEFAULT_RETENTION_DAYS = 365;

/** The settings of a row from `findSiteSettings` (defaults when the site never saved any). */
export function settingsOf(row: Partial<Pick<repo.SiteSettingsRow, 'enabled' | 'revision' | 'log_retention_days' | 'settings' | 'updated_at'>>): Settings {
  const stored = parseJson<Partial<Stored>>(row.settings, {});
  return {
    ...DEFAULTS,
    ...stored,
    texts: { ...DEFAULT_TEXTS, ...stored.texts },
    enabled: Boolean(row.enabled),
    logRetentionDays: row.log_retention_days ?? DEFAULT_RETENTION_DAYS,
    revision: row.revision ?? 1,
    updatedAt: row.updated_at ?? null,
  };
}

export async function getSettings(db: Db, siteId: string): Promise<Settings> {
  const row = await repo.findSiteSettings(db, siteId);
  if (!row) throw new AppError('NOT_FOUND');
  return settingsOf(row);
}

/** Whether banners must ask again (decisions CC2): category keys, a category's `required`, or service keys changed. */
export function changesConsent(before: Stored, after: Stored): boolean {
  const categories = (s: Stored) => JSON.stringify(s.categories.map((c) => [c.key, c.required]).sort());
  const services = (s: Stored) => JSON.stringify(s.services.map((x) => x.key).sort());
  return categories(before) !== categories(after) || services(before) !== services(after);
}

function uniqueKeys(items: ReadonlyArray<{ key: string }>, field: string): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.key)) throw invalid('VALIDATION_FAILED', `${field}[${i}].key`, `"${item.key}" is used twice`);
    seen.add(item.key);
  });
}

function checkStyle(overrides: Record<string, string>): void {
  const issues: Array<{ path: string; message: string }> = [];
  for (const [key, value] of Object.entries(overrides)) {
    if (!STYLE_VARIABLES.has(key)) issues.push({ path: `styleOverrides.${key}`, message: 'is not a CSS variable of the banner (--cc-...)' });
    else if (UNSAFE_STYLE.test(value)) issues.push({ path: `styleOverrides.${key}`, message: 'must not contain ; { } < > \\, url(, expression( or @import' });
  }
  if (issues.length) throw issuesError('VALIDATION_FAILED', issues);
}

/** Translations keyed by canonical enabled locales, naming only configured categories and services. */
function checkTranslations(input: Record<string, Translation>, locales: SiteLocales, s: Stored): Record<string, Translation> {
  const out: Record<string, Translation> = {};
  const categories = new Set(s.categories.map((c) => c.key));
  const services = new Set(s.services.map((x) => x.key));
  for (const [tag, t] of Object.entries(input)) {
    const locale = resolveLocale(locales, tag, `translations.${tag}`);
    for (const key of Object.keys(t.categories ?? {}))
      if (!categories.has(key)) throw invalid('CONSENT_CATEGORY_UNKNOWN', `translations.${tag}.categories.${key}`);
    for (const key of Object.keys(t.services ?? {}))
      if (!services.has(key)) throw invalid('VALIDATION_FAILED', `translations.${tag}.services.${key}`, 'is not a configured service');
    out[locale] = t;
  }
  return out;
}

/** Saved translations, without the categories and services a PUT removed. */
function withoutRemovedKeys(translations: Record<string, Translation>, s: Stored): Record<string, Translation> {
  const keep = <T>(map: Record<string, T> | undefined, keys: Set<string>) => map && Object.fromEntries(Object.entries(map).filter(([k]) => keys.has(k)));
  const categories = new Set(s.categories.map((c) => c.key));
  const services = new Set(s.services.map((x) => x.key));
  return Object.fromEntries(
    Object.entries(translations).map(([locale, t]) => [locale, { ...t, categories: keep(t.categories, categories), services: keep(t.services, services) }]),
  );
}

/** The stored fields after a PUT: arrays and objects replace what was there, texts merge. */
function merge(before: Stored, input: SettingsUpdate): Stored {
  const { enabled: _e, logRetentionDays: _l, texts, categories, services, translations: _t, ...rest } = input;
  return {
    ...before,
    ...rest,
    primaryColor: (input.primaryColor ?? before.primaryColor).toLowerCase(),
    texts: { ...before.texts, ...texts },
    categories:
      categories?.map((c) => ({
        key: c.key,
        label: c.label,
        description: c.description ?? null,
        required: c.required ?? false,
        defaultEnabled: c.required ? true : (c.defaultEnabled ?? false),
      })) ?? before.categories,
    services:
      services?.map((x) => ({
        key: x.key,
        name: x.name,
        category: x.category,
        description: x.description ?? null,
        cookies: (x.cookies ?? []).map((k) => ({ name: k.name, duration: k.duration, description: k.description ?? null })),
      })) ?? before.services,
  };
}

/** A partial update, checked whole (services against the resulting categories) before it is written. */
export async function updateSettings(db: Db, siteId: string, input: SettingsUpdate): Promise<Settings> {
  const locales = input.translations ? await getSiteLocales(db, siteId) : null;
  if (input.categories) uniqueKeys(input.categories, 'categories');
  if (input.services) uniqueKeys(input.services, 'services');
  if (input.styleOverrides) checkStyle(input.styleOverrides);
  return db.transaction().execute(async (tx) => {
    const current = settingsOf((await repo.findSettingsForUpdate(tx, siteId)) ?? {});
    const { enabled, logRetentionDays, revision, updatedAt: _u, ...before } = current;
    const after = merge(before, input);
    const known = new Set(after.categories.map((c) => c.key));
    after.services.forEach((x, i) => {
      if (!known.has(x.category)) throw invalid('CONSENT_CATEGORY_UNKNOWN', `services[${i}].category`, `"${x.category}" is not one of the categories`);
    });
    after.translations = input.translations && locales ? checkTranslations(input.translations, locales, after) : withoutRemovedKeys(before.translations, after);
    await repo.saveSettings(tx, {
      site_id: siteId,
      enabled: input.enabled ?? enabled,
      revision: revision + (changesConsent(before, after) ? 1 : 0),
      log_retention_days: input.logRetentionDays ?? logRetentionDays,
      settings: toJson(after),
      updated_at: now(),
    });
    return getSettings(tx, siteId);
  });
}
