import { sql, type Insertable, type Selectable, type SelectQueryBuilder } from 'kysely';
import { dialectOf, escapeLike } from '../../db/dialect.js';
import { prepared } from '../../db/prepared.js';
import type { AutoId, Bool, DB, Executor, Json, Timestamp } from '../../db/types.js';
import { tableRepository } from '../../kit/repository.js';
import { dateBound } from '../../shared/pagination.js';

export interface CookieConsentSettingsTable {
  site_id: string;
  enabled: Bool;
  revision: number;
  log_retention_days: number;
  settings: Json<Record<string, unknown>>;
  updated_at: Timestamp;
}

export interface CookieConsentsTable {
  id: AutoId;
  site_id: string;
  consent_id: string;
  action: string;
  /** Accepted category keys joined with ",". */
  categories: string;
  services: Json<Record<string, string[]>>;
  revision: number;
  locale: string | null;
  page_url: string | null;
  ip_address: string | null;
  user_agent: string | null;
  created_at: Timestamp;
}

export interface CookieConsentDailyCountsTable {
  site_id: string;
  day: string;
  metric: string;
  n: number;
}

declare module '../../db/types.js' {
  interface DB {
    cookie_consent_settings: CookieConsentSettingsTable;
    cookie_consents: CookieConsentsTable;
    cookie_consent_daily_counts: CookieConsentDailyCountsTable;
  }
}

export type ConsentRow = Selectable<CookieConsentsTable>;
export const consentsTable = tableRepository('cookie_consents');

/** The site's settings row (if saved) with what reading it needs of the site: locales and timezone. */
export interface SiteSettingsRow {
  slug: string;
  default_locale: string;
  enabled_locales: unknown;
  timezone: string;
  enabled: boolean | number | null;
  revision: number | null;
  log_retention_days: number | null;
  settings: unknown;
  updated_at: Timestamp | null;
}

// Read by every public config read and record: prepared (P16).
const siteSettingsQuery = prepared((db, p: { siteId: string }) =>
  db
    .selectFrom('sites')
    .leftJoin('cookie_consent_settings as s', 's.site_id', 'sites.id')
    .select([
      'sites.slug',
      'sites.default_locale',
      'sites.enabled_locales',
      'sites.timezone',
      's.enabled',
      's.revision',
      's.log_retention_days',
      's.settings',
      's.updated_at',
    ])
    .where('sites.id', '=', p.siteId),
);

export function findSiteSettings(db: Executor, siteId: string): Promise<SiteSettingsRow | undefined> {
  return siteSettingsQuery.executeTakeFirst(db, { siteId }) as Promise<SiteSettingsRow | undefined>;
}

/** The saved row, locked for the rest of the transaction on PostgreSQL (a concurrent PUT waits). */
export function findSettingsForUpdate(db: Executor, siteId: string) {
  return db.selectFrom('cookie_consent_settings').selectAll().where('site_id', '=', siteId).modifyEnd(dialectOf(db).lockForUpdate()).executeTakeFirst();
}

export async function saveSettings(db: Executor, row: Insertable<CookieConsentSettingsTable>): Promise<void> {
  const { site_id: _siteId, ...values } = row;
  await db
    .insertInto('cookie_consent_settings')
    .values(row)
    .onConflict((oc) => oc.column('site_id').doUpdateSet(values))
    .execute();
}

const insertConsentQuery = prepared((db, p: Insertable<CookieConsentsTable>) => db.insertInto('cookie_consents').values(p).returning('id'));

export async function insertConsent(db: Executor, row: Insertable<CookieConsentsTable>): Promise<number> {
  const [inserted] = await insertConsentQuery.execute(db, row);
  return Number(inserted!.id);
}

/**
 * Adds one to each metric of the day, in the caller's transaction: one statement whose rows are
 * in a fixed (sorted) order, so concurrent records lock them in the same order and never deadlock.
 */
export async function countDaily(db: Executor, siteId: string, day: string, metrics: readonly string[]): Promise<void> {
  const rows = [...metrics].sort().map((metric) => ({ site_id: siteId, day, metric, n: 1 }));
  await db
    .insertInto('cookie_consent_daily_counts')
    .values(rows)
    .onConflict((oc) => oc.columns(['site_id', 'day', 'metric']).doUpdateSet({ n: sql`cookie_consent_daily_counts.n + excluded.n` }))
    .execute();
}

/** The counts per metric over the days from `startDate` to `endDate`: O(days x metrics) rows read. */
export function sumDaily(db: Executor, siteId: string, startDate: string, endDate: string) {
  return db
    .selectFrom('cookie_consent_daily_counts')
    .select(['metric', (eb) => eb.fn.sum<number | string>('n').as('total')])
    .where('site_id', '=', siteId)
    .where('day', '>=', startDate)
    .where('day', '<=', endDate)
    .groupBy('metric')
    .execute();
}

export interface ConsentFilters {
  action?: string;
  category?: string;
  consentId?: string;
  revision?: number;
  dateFrom?: string;
  dateTo?: string;
}

/** The log filters (decisions CC4), shared by the list and the export. */
export function applyConsentFilters<O>(qb: SelectQueryBuilder<DB, 'cookie_consents', O>, f: ConsentFilters) {
  let q = qb;
  if (f.action) q = q.where('action', '=', f.action);
  if (f.consentId) q = q.where('consent_id', '=', f.consentId);
  if (f.revision !== undefined) q = q.where('revision', '=', f.revision);
  if (f.category) q = q.where(sql<boolean>`(',' || categories || ',') like ${`%,${escapeLike(f.category)},%`} escape '\\'`);
  if (f.dateFrom) q = q.where('created_at', '>=', dateBound(f.dateFrom, false));
  if (f.dateTo) q = q.where('created_at', '<=', dateBound(f.dateTo, true));
  return q;
}

/** Records in id order, `batch` at a time after `afterId` (the CSV export's pages). */
export function consentBatch(db: Executor, siteId: string, filters: ConsentFilters, afterId: number, batch: number) {
  const base = db.selectFrom('cookie_consents').selectAll().where('site_id', '=', siteId).where('id', '>', afterId);
  return applyConsentFilters(base, filters).orderBy('id').limit(batch).execute();
}

/** Sites that keep their records a limited number of days. */
export function retentionPolicies(db: Executor) {
  return db.selectFrom('cookie_consent_settings').select(['site_id', 'log_retention_days']).where('log_retention_days', '>', 0).execute();
}

/** Deletes at most `limit` of a site's records created before `cutoff`; the daily counts stay. */
export async function deleteConsentsBefore(db: Executor, siteId: string, cutoff: string, limit: number): Promise<number> {
  const ids = db.selectFrom('cookie_consents').select('id').where('site_id', '=', siteId).where('created_at', '<', cutoff).orderBy('id').limit(limit);
  const res = await db.deleteFrom('cookie_consents').where('site_id', '=', siteId).where('id', 'in', ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}
