import { randomBytes, randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db, Executor, SitesTable } from '../../db/types.js';
import { now, parseJson, toJson } from '../../db/json.js';
import { AppError, invalid, notFound } from '../../shared/errors.js';
import { findFreeSlug, retryLostSlug, slugify } from '../../shared/slug.js';
import { canonicalLocale, inLocaleCatalog, isTimezone, localeCatalog, localeInfo } from '../../shared/locales.js';
import * as repo from './sites.repository.js';
import { seedRoles } from '../roles/roles.service.js';
import { OWNER_ROLE_SLUG } from '../roles/roles.seeds.js';
import { insertOwner } from '../users/users.service.js';

type SiteRow = Selectable<SitesTable>;

export function toSiteListItem(r: SiteRow) {
  return {
    id: r.id,
    name: r.name,
    domain: r.domain,
    slug: r.slug,
    isActive: Boolean(r.is_active),
    defaultLocale: r.default_locale,
    enabledLocales: parseJson<string[]>(r.enabled_locales, []),
    createdAt: r.created_at,
  };
}

export function toSiteInfo(r: SiteRow) {
  return {
    id: r.id,
    publicKey: r.public_key,
    name: r.name,
    domain: r.domain,
    slug: r.slug,
    logoUrl: r.logo_url,
    faviconUrl: r.favicon_url,
    isActive: Boolean(r.is_active),
  };
}

/** The settings: the info's fields and more (the response schema orders the keys). */
export function toSiteSettings(r: SiteRow) {
  return {
    ...toSiteInfo(r),
    description: r.description,
    timezone: r.timezone,
    showBranding: Boolean(r.show_branding),
    previewUrl: r.preview_url,
    organizationId: r.organization_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function getSite(db: Executor, siteId: string): Promise<SiteRow> {
  const site = await repo.findSite(db, siteId);
  if (!site) throw notFound('site');
  return site;
}

export interface CreatedSite {
  id: string;
  name: string;
  domain: string;
  slug: string;
  publicKey: string;
  ownerUserId: string;
  createdAt: string;
}

/** Creates a site with its roles, its owner user and default settings, in one transaction. */
export async function createSite(db: Db, input: { name: string; domain: string; defaultLocale?: string; ownerName?: string }): Promise<CreatedSite> {
  const name = input.name.trim();
  const domain = input.domain.trim().toLowerCase();
  if (!name || name.length > 255) throw invalid('VALIDATION_FAILED', 'name', 'name must be 1-255 characters');
  if (!domain || domain.length > 255) throw invalid('VALIDATION_FAILED', 'domain', 'domain must be 1-255 characters');
  const locale = canonicalLocale(input.defaultLocale ?? 'en');
  if (!locale) throw invalid('LOCALE_INVALID', 'defaultLocale');
  return retryLostSlug(true, () => db.transaction().execute((tx) => insertSite(tx, { ...input, name, domain, defaultLocale: locale })));
}

/** createSite's transaction body, input checked: for a caller that holds its own transaction (the first-start bootstrap). */
export async function insertSite(tx: Executor, input: { name: string; domain: string; defaultLocale: string; ownerName?: string }): Promise<CreatedSite> {
  const { name, domain, defaultLocale: locale } = input;
  const at = now();
  const base = slugify(name) || 'site';
  const slug = await findFreeSlug(base, (c) => repo.slugsIn(tx, c));
  const id = randomUUID();
  const publicKey = `pk_${randomBytes(18).toString('base64url')}`;
  await repo.insertSite(tx, {
    id,
    name,
    domain,
    slug,
    description: null,
    logo_url: null,
    favicon_url: null,
    timezone: 'UTC',
    is_active: true,
    show_branding: true,
    preview_url: null,
    organization_id: null,
    public_key: publicKey,
    default_locale: locale,
    multi_language_enabled: false,
    enabled_locales: toJson([locale]),
    detection_enabled: false,
    detection_order: toJson(['cookie', 'browser']),
    cookie_name: 'cairn_locale',
    cookie_max_age: 365,
    redirect_to_default: false,
    hide_default_locale: true,
    created_at: at,
    updated_at: at,
  });
  const roles = await seedRoles(tx, id, at);
  const ownerUserId = await insertOwner(tx, id, roles[OWNER_ROLE_SLUG]!, input.ownerName ?? 'Site owner', at);
  await repo.insertNotificationDefaults(tx, id, at);
  return { id, name, domain, slug, publicKey, ownerUserId, createdAt: at };
}

export async function listAllSites(db: Executor) {
  return (await repo.listSites(db)).map(toSiteListItem);
}

export function countSites(db: Executor) {
  return repo.countSites(db);
}

export interface SettingsPatch {
  name?: string;
  domain?: string;
  description?: string | null;
  logoUrl?: string | null;
  faviconUrl?: string | null;
  timezone?: string;
  isActive?: boolean;
  showBranding?: boolean;
  previewUrl?: string | null;
}

export async function updateSettings(db: Executor, siteId: string, patch: SettingsPatch) {
  await getSite(db, siteId);
  if (patch.timezone !== undefined && !isTimezone(patch.timezone)) throw invalid('TIMEZONE_INVALID', 'timezone');
  await repo.updateSite(db, siteId, {
    name: patch.name?.trim(),
    domain: patch.domain?.toLowerCase(),
    description: patch.description,
    logo_url: patch.logoUrl,
    favicon_url: patch.faviconUrl,
    timezone: patch.timezone,
    is_active: patch.isActive,
    show_branding: patch.showBranding,
    preview_url: patch.previewUrl,
    updated_at: now(),
  });
  return toSiteSettings(await getSite(db, siteId));
}

export function toLanguageSettings(site: SiteRow) {
  const enabled = parseJson<string[]>(site.enabled_locales, [site.default_locale]);
  const extra = enabled.filter((code) => !inLocaleCatalog(code)).map(localeInfo);
  const catalog = extra.length ? [...localeCatalog(), ...extra] : localeCatalog();
  return {
    defaultLocale: site.default_locale,
    multiLanguageEnabled: Boolean(site.multi_language_enabled),
    enabledLocales: enabled,
    availableLocales: catalog.map((l) => ({ ...l, enabled: enabled.includes(l.code) })),
  };
}

export async function updateLanguage(db: Executor, siteId: string, input: { defaultLocale: string; multiLanguageEnabled: boolean; enabledLocales: string[] }) {
  await getSite(db, siteId);
  const errors: Record<string, string[]> = {};
  const enabled: string[] = [];
  input.enabledLocales.forEach((tag, i) => {
    const c = canonicalLocale(tag);
    if (!c) errors[`enabledLocales[${i}]`] = [`${tag} is not a valid BCP 47 language tag`];
    else if (!enabled.includes(c)) enabled.push(c);
  });
  const defaultLocale = canonicalLocale(input.defaultLocale);
  if (!defaultLocale) errors.defaultLocale = ['is not a valid BCP 47 language tag'];
  if (Object.keys(errors).length) throw new AppError('LOCALE_INVALID', { errors });
  if (!enabled.includes(defaultLocale!)) throw invalid('DEFAULT_LOCALE_NOT_ENABLED', 'defaultLocale');
  if (!input.multiLanguageEnabled && enabled.length > 1) {
    throw invalid('VALIDATION_FAILED', 'enabledLocales', 'Only the default locale can be enabled while multiLanguageEnabled is false');
  }
  await repo.updateSite(db, siteId, {
    default_locale: defaultLocale!,
    multi_language_enabled: input.multiLanguageEnabled,
    enabled_locales: toJson(enabled),
    updated_at: now(),
  });
  const settings = toLanguageSettings(await getSite(db, siteId));
  // Locale-prefix redirects arrive with the redirects module; until then none are made (issue 2, item 9).
  return { ...settings, redirects: { created: 0, deleted: 0 }, message: 'Language settings updated.' };
}

export function toDetection(site: SiteRow) {
  const order = parseJson<Array<'cookie' | 'browser' | 'geo'>>(site.detection_order, []);
  const enabled = Boolean(site.detection_enabled);
  return {
    detectionMethod: (enabled && order[0]) || ('none' as const),
    redirectToDefault: Boolean(site.redirect_to_default),
    hideDefaultLocale: Boolean(site.hide_default_locale),
    detectionEnabled: enabled,
    detectionOrder: order,
    cookieName: site.cookie_name,
    cookieMaxAge: site.cookie_max_age,
  };
}

export async function updateDetection(
  db: Executor,
  siteId: string,
  input: {
    detectionEnabled: boolean;
    detectionOrder: Array<'cookie' | 'browser' | 'geo'>;
    cookieName: string;
    cookieMaxAge: number;
    redirectToDefault?: boolean;
    hideDefaultLocale?: boolean;
  },
) {
  await getSite(db, siteId);
  await repo.updateSite(db, siteId, {
    detection_enabled: input.detectionEnabled,
    detection_order: toJson(input.detectionOrder),
    cookie_name: input.cookieName,
    cookie_max_age: input.cookieMaxAge,
    redirect_to_default: input.redirectToDefault,
    hide_default_locale: input.hideDefaultLocale,
    updated_at: now(),
  });
  return toDetection(await getSite(db, siteId));
}
