import type { Insertable, Updateable } from 'kysely';
import type { AutoId, Bool, Executor, Timestamp } from '../../db/types.js';

export interface SeoSettingsTable {
  id: AutoId;
  site_id: string;
  robots_rules: string;
  robots_sitemap_link: Bool;
  ai_crawlers: string;
  default_priority: number;
  default_changefreq: string;
  include_contents_in_sitemap: Bool;
  content_path_prefixes: string;
  content_type_priorities: string;
  blog_url_mode: string;
  blog_prefix: string | null;
  index_now_key: string | null;
  index_now_enabled: Bool;
  index_now_last_verified_at: Timestamp | null;
  search_indexing_enabled: Bool;
  llms_txt_enabled: Bool;
  llms_site_description: string | null;
  sitemap_index_enabled: Bool;
  /** IndexNow: contents changed up to this time have been submitted. */
  index_now_submitted_until: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface IndexNowLogsTable {
  id: AutoId;
  site_id: string;
  url: string;
  status: 'success' | 'failed';
  response_code: number | null;
  error: string | null;
  submitted_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    seo_settings: SeoSettingsTable;
    indexnow_logs: IndexNowLogsTable;
  }
}

export function findSettings(db: Executor, siteId: string) {
  return db.selectFrom('seo_settings').selectAll().where('site_id', '=', siteId).executeTakeFirst();
}

/** Writes the defaults for a site that has none yet (a second writer's row wins; nothing changes). */
export function insertDefaults(db: Executor, row: Insertable<SeoSettingsTable>) {
  return db
    .insertInto('seo_settings')
    .values(row)
    .onConflict((oc) => oc.column('site_id').doNothing())
    .execute();
}

export function updateSettings(db: Executor, siteId: string, patch: Updateable<SeoSettingsTable>) {
  return db.updateTable('seo_settings').set(patch).where('site_id', '=', siteId).execute();
}

/** What public URLs are built from (decisions G18): the site's domain and locales, and its SEO settings. */
export function urlContext(db: Executor, siteId: string) {
  return db
    .selectFrom('sites')
    .leftJoin('seo_settings', 'seo_settings.site_id', 'sites.id')
    .select([
      'sites.domain',
      'sites.default_locale',
      'sites.hide_default_locale',
      'seo_settings.blog_url_mode',
      'seo_settings.blog_prefix',
      'seo_settings.content_path_prefixes',
      'seo_settings.id as settings_id',
    ])
    .where('sites.id', '=', siteId)
    .executeTakeFirst();
}

// ---- IndexNow (decisions S12) ----

/** Sites with IndexNow on and a key: the one statement across sites, like a job claim. */
export function indexNowSites(db: Executor) {
  return db
    .selectFrom('seo_settings')
    .innerJoin('sites', 'sites.id', 'seo_settings.site_id')
    .select(['seo_settings.site_id', 'seo_settings.index_now_key', 'seo_settings.index_now_submitted_until', 'sites.domain'])
    .where('seo_settings.index_now_enabled', '=', true)
    .where('seo_settings.index_now_key', 'is not', null)
    .execute();
}

/** Moves the watermark from `from` to `to` unless another process did first; answers whether this one did. */
export async function claimWatermark(db: Executor, siteId: string, from: string | null, to: string | null): Promise<boolean> {
  let q = db.updateTable('seo_settings').set({ index_now_submitted_until: to }).where('site_id', '=', siteId);
  q = from === null ? q.where('index_now_submitted_until', 'is', null) : q.where('index_now_submitted_until', '=', from);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function insertIndexNowLogs(db: Executor, rows: Insertable<IndexNowLogsTable>[]) {
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('indexnow_logs')
      .values(rows.slice(i, i + 500))
      .execute();
}

export function indexNowLogs(db: Executor, siteId: string) {
  return db.selectFrom('indexnow_logs').selectAll().where('site_id', '=', siteId);
}

export async function indexNowStats(db: Executor, siteId: string) {
  const row = await db
    .selectFrom('indexnow_logs')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.sum<number>(eb.case().when('status', '=', 'success').then(1).else(0).end()).as('success'),
      eb.fn.max('submitted_at').as('last'),
    ])
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  const total = Number(row.total);
  const success = Number(row.success ?? 0);
  return { total, success, failed: total - success, lastSubmittedAt: (row.last as string | null) ?? null };
}

export function markVerified(db: Executor, siteId: string, at: string) {
  return db.updateTable('seo_settings').set({ index_now_last_verified_at: at }).where('site_id', '=', siteId).execute();
}

export async function deleteOldIndexNowLogs(db: Executor, cutoff: string, limit: number): Promise<number> {
  const old = db.selectFrom('indexnow_logs').select('id').where('submitted_at', '<', cutoff).limit(limit);
  const res = await db.deleteFrom('indexnow_logs').where('id', 'in', old).executeTakeFirst();
  return Number(res.numDeletedRows);
}
