import type { Executor } from '../db/types.js';
import { prepared } from '../db/prepared.js';
import { parseJson } from '../db/json.js';
import { invalid, notFound } from './errors.js';
import { canonicalLocale } from './locales.js';

/** The language context every translatable resource checks its locale against (decisions G9). */
export interface SiteLocales {
  defaultLocale: string;
  enabledLocales: string[];
  /** The site's domain, read in the same statement: a write that also records its links needs it (search-console links). */
  domain: string;
}

// Prepared once (db/prepared.ts): every create and translatable write reads it; on PostgreSQL a named statement (PF5).
const siteLocalesQuery = prepared((db, p: { siteId: string }) =>
  db.selectFrom('sites').select(['default_locale', 'enabled_locales', 'domain']).where('id', '=', p.siteId),
);

export async function getSiteLocales(db: Executor, siteId: string): Promise<SiteLocales> {
  const site = await siteLocalesQuery.executeTakeFirst(db, { siteId });
  if (!site) throw notFound('site');
  return { defaultLocale: site.default_locale, enabledLocales: parseJson<string[]>(site.enabled_locales, [site.default_locale]), domain: site.domain };
}

/** A record's locale: the site's default when omitted; canonical case; 422 when not enabled. */
export function resolveLocale(locales: SiteLocales, input: string | undefined | null, field = 'locale'): string {
  if (input === undefined || input === null || input === '') return locales.defaultLocale;
  const canonical = canonicalLocale(input);
  if (!canonical) throw invalid('LOCALE_INVALID', field);
  if (!locales.enabledLocales.includes(canonical)) {
    throw invalid('LOCALE_NOT_ENABLED', field, `The locale ${canonical} is not enabled for this site (enabled: ${locales.enabledLocales.join(', ')}).`);
  }
  return canonical;
}
