import { Type } from 'typebox';
import { HttpUrl, Nullable, named, Timestamp } from '../../shared/schemas.js';

export const HOSTNAME_PATTERN =
  '^(?=.{1,255}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::\\d{1,5})?$';
const Url = HttpUrl({ maxLength: 1000 });

export const SiteListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  domain: Type.String(),
  slug: Type.String(),
  isActive: Type.Boolean(),
  defaultLocale: Type.String(),
  enabledLocales: Type.Array(Type.String()),
  createdAt: Timestamp,
});

export const SiteInfo = Type.Object({
  id: Type.String(),
  publicKey: Type.String({ description: 'The public site key (`pk_...`, not a secret) for /v1/public/ endpoints (decisions G19)' }),
  name: Type.String(),
  domain: Type.String(),
  slug: Type.String(),
  logoUrl: Nullable(Type.String()),
  faviconUrl: Nullable(Type.String()),
  isActive: Type.Boolean(),
});

export const SiteSettings = Type.Object({
  id: Type.String(),
  publicKey: Type.String({ description: 'The public site key (`pk_...`, not a secret) for /v1/public/ endpoints (decisions G19)' }),
  name: Type.String(),
  domain: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  logoUrl: Nullable(Type.String()),
  faviconUrl: Nullable(Type.String()),
  timezone: Type.String(),
  isActive: Type.Boolean(),
  showBranding: Type.Boolean(),
  previewUrl: Nullable(Type.String()),
  organizationId: Nullable(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const SiteSettingsUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    domain: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: HOSTNAME_PATTERN, description: 'Host name, optionally with a port' })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
    logoUrl: Type.Optional(Nullable(Url)),
    faviconUrl: Type.Optional(Nullable(Url)),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'IANA timezone identifier' })),
    isActive: Type.Optional(Type.Boolean()),
    showBranding: Type.Optional(Type.Boolean()),
    previewUrl: Type.Optional(Nullable(Url)),
  },
  { minProperties: 1 },
);

export const LocaleSchema = Type.Object({
  code: Type.String(),
  label: Type.String(),
  flag: Type.String(),
  direction: Type.Union([Type.Literal('ltr'), Type.Literal('rtl')]),
});

export const LanguageSettings = Type.Object({
  defaultLocale: Type.String(),
  multiLanguageEnabled: Type.Boolean(),
  enabledLocales: Type.Array(Type.String()),
  availableLocales: Type.Array(Type.Object({ ...LocaleSchema.properties, enabled: Type.Boolean() })),
});

export const LanguageUpdate = Type.Object({
  defaultLocale: Type.String({ minLength: 2, maxLength: 35 }),
  multiLanguageEnabled: Type.Boolean(),
  enabledLocales: Type.Array(Type.String({ minLength: 2, maxLength: 35 }), { minItems: 1, maxItems: 100 }),
});

export const LanguageUpdateResult = Type.Object({
  ...LanguageSettings.properties,
  redirects: Type.Object({ created: Type.Integer(), deleted: Type.Integer() }),
  message: Type.String(),
});

const DetectionMethod = Type.Union([Type.Literal('cookie'), Type.Literal('browser'), Type.Literal('geo')]);

export const Detection = Type.Object({
  detectionMethod: Type.Union([DetectionMethod, Type.Literal('none')], {
    description: 'The first method of detectionOrder while detection is enabled, else none',
  }),
  redirectToDefault: Type.Boolean(),
  hideDefaultLocale: Type.Boolean(),
  detectionEnabled: Type.Boolean(),
  detectionOrder: Type.Array(DetectionMethod),
  cookieName: Type.String(),
  cookieMaxAge: Type.Integer({ description: 'Days' }),
});

export const DetectionUpdate = Type.Object({
  detectionEnabled: Type.Boolean(),
  detectionOrder: Type.Array(DetectionMethod, { minItems: 0, maxItems: 3, uniqueItems: true }),
  cookieName: Type.String({ minLength: 1, maxLength: 50, pattern: "^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$" }),
  cookieMaxAge: Type.Integer({ minimum: 1, maximum: 3650, description: 'Days' }),
  redirectToDefault: Type.Optional(Type.Boolean()),
  hideDefaultLocale: Type.Optional(Type.Boolean()),
});

/** The response schemas by name in OpenAPI (components.schemas). */
export const SiteListItemRef = named('Site', SiteListItem);
export const SiteInfoRef = named('SiteInfo', SiteInfo);
export const SiteSettingsRef = named('SiteSettings', SiteSettings);
export const LanguageSettingsRef = named('LanguageSettings', LanguageSettings);
export const LanguageUpdateResultRef = named('LanguageUpdateResult', LanguageUpdateResult);
export const DetectionRef = named('LocaleDetection', Detection);
