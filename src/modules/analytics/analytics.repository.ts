import type { Insertable } from 'kysely';
import type { Bool, Executor, Json, Timestamp } from '../../db/types.js';

/** Settings, salts and the site facts the collector needs (the event tables are the store's: analytics.store.ts). */
export interface AnalyticsSettingsTable {
  site_id: string;
  tracking_enabled: Bool;
  raw_retention_days: number;
  aggregate_retention_days: number;
  excluded_paths: Json<string[]>;
  excluded_ips: Json<string[]>;
  updated_at: Timestamp;
}

export interface AnalyticsSaltsTable {
  site_id: string;
  /** The site's local date, `YYYY-MM-DD`. */
  date: string;
  /** 32 random bytes, hex. */
  salt: string;
}

declare module '../../db/types.js' {
  interface DB {
    analytics_settings: AnalyticsSettingsTable;
    analytics_salts: AnalyticsSaltsTable;
  }
}

export function findSettings(db: Executor, siteId: string) {
  return db.selectFrom('analytics_settings').selectAll().where('site_id', '=', siteId).executeTakeFirst();
}

export async function saveSettings(db: Executor, row: Insertable<AnalyticsSettingsTable>) {
  await db
    .insertInto('analytics_settings')
    .values(row)
    .onConflict((oc) => oc.column('site_id').doUpdateSet(row))
    .execute();
}

export function listSettings(db: Executor) {
  return db.selectFrom('analytics_settings').select(['site_id', 'raw_retention_days', 'aggregate_retention_days']).execute();
}

export function findSite(db: Executor, siteId: string) {
  return db.selectFrom('sites').select(['id', 'domain', 'preview_url', 'timezone', 'public_key']).where('id', '=', siteId).executeTakeFirst();
}

export function listSiteIds(db: Executor) {
  return db.selectFrom('sites').select(['id', 'timezone']).execute();
}

export async function findSalt(db: Executor, siteId: string, date: string): Promise<string | undefined> {
  const row = await db.selectFrom('analytics_salts').select('salt').where('site_id', '=', siteId).where('date', '=', date).executeTakeFirst();
  return row?.salt;
}

export async function insertSalt(db: Executor, siteId: string, date: string, salt: string): Promise<void> {
  await db
    .insertInto('analytics_salts')
    .values({ site_id: siteId, date, salt })
    .onConflict((oc) => oc.columns(['site_id', 'date']).doNothing())
    .execute();
}

export async function deleteSaltsBefore(db: Executor, siteId: string, date: string): Promise<void> {
  await db.deleteFrom('analytics_salts').where('site_id', '=', siteId).where('date', '<', date).execute();
}
