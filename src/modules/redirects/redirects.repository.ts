import { type Insertable, sql } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import { prepared } from '../../db/prepared.js';
import type { AutoId, Bool, Executor, Timestamp } from '../../db/types.js';

export interface RedirectsTable {
  id: AutoId;
  site_id: string;
  source_path: string;
  /** SHA-256 of the matching key (rules.ts `sourceKey`): unique per site. */
  source_hash: string;
  target_url: string;
  status_code: number;
  is_regex: Bool;
  is_active: Bool;
  preserve_query_string: Bool;
  note: string | null;
  hit_count: number;
  last_hit_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface RedirectLogsTable {
  id: AutoId;
  site_id: string;
  redirect_id: number;
  referrer: string | null;
  user_agent: string | null;
  ip_address: string | null;
  created_at: Timestamp;
}

export interface RedirectMissesTable {
  id: AutoId;
  site_id: string;
  path: string;
  path_hash: string;
  hits: number;
  last_referrer: string | null;
  first_seen_at: Timestamp;
  last_seen_at: Timestamp;
}

export interface RedirectSettingsTable {
  site_id: string;
  log_retention_days: number;
  anonymize_ip: Bool;
  redirect_on_slug_change: Bool;
  updated_at: Timestamp;
}

/** A site's rules version: one more at every change to a rule, by trigger (migration 0047, decisions HN17). */
export interface RedirectRuleVersionsTable {
  site_id: string;
  version: number;
}

declare module '../../db/types.js' {
  interface DB {
    redirect_rule_versions: RedirectRuleVersionsTable;
    redirects: RedirectsTable;
    redirect_logs: RedirectLogsTable;
    redirect_misses: RedirectMissesTable;
    redirect_settings: RedirectSettingsTable;
  }
}

/**
 * What the matcher needs of a site's active rules, in the stable order regex rules are tried (R1:
 * by id), `limit` at a time after `afterId` (a site may hold 100,000: read in pages, decisions
 * HN7), each page through `redirects_site_active_id_idx` (decisions HN8: without it every page
 * read and sorted all of the site's rules).
 */
export function activeRulesPageQuery(db: Executor, siteId: string, afterId: number, limit: number) {
  return db
    .selectFrom('redirects')
    .select(['id', 'source_path', 'target_url', 'status_code', 'is_regex', 'preserve_query_string'])
    .where('site_id', '=', siteId)
    .where('is_active', '=', true)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit);
}

export function activeRulesPage(db: Executor, siteId: string, afterId: number, limit: number) {
  return activeRulesPageQuery(db, siteId, afterId, limit).execute();
}

/** The site's domain (absolute targets on it are followed when checking loops) and its redirect settings. */
/** Makes the site's rules version row (at 0) if it has none: the triggers only count on a row that exists. */
export async function ensureRulesVersion(db: Executor, siteId: string): Promise<void> {
  await db
    .insertInto('redirect_rule_versions')
    .values({ site_id: siteId, version: 0 })
    .onConflict((oc) => oc.column('site_id').doNothing())
    .execute();
}

/** The site's rules version as committed (0 without a row). */
export async function rulesVersion(db: Executor, siteId: string): Promise<number> {
  const row = await db.selectFrom('redirect_rule_versions').select('version').where('site_id', '=', siteId).executeTakeFirst();
  return Number(row?.version ?? 0);
}

/**
 * Inside a transaction: the site's rules version, its row locked until commit (made if absent).
 * On PostgreSQL another transaction changing the site's rules waits here, and one that committed
 * meanwhile is seen; on SQLite the transaction already holds the one writer.
 */
export async function lockRulesVersion(trx: Executor, siteId: string): Promise<number> {
  const row = await trx
    .insertInto('redirect_rule_versions')
    .values({ site_id: siteId, version: 0 })
    .onConflict((oc) => oc.column('site_id').doUpdateSet({ version: sql`redirect_rule_versions.version` }))
    .returning('version')
    .executeTakeFirstOrThrow();
  return Number(row.version);
}

export function siteContext(db: Executor, siteId: string) {
  return db
    .selectFrom('sites')
    .leftJoin('redirect_settings', 'redirect_settings.site_id', 'sites.id')
    .select(['sites.domain', 'redirect_settings.log_retention_days', 'redirect_settings.anonymize_ip', 'redirect_settings.redirect_on_slug_change'])
    .where('sites.id', '=', siteId)
    .executeTakeFirst();
}

export function upsertSettings(db: Executor, row: Insertable<RedirectSettingsTable>) {
  const { site_id: _site, ...patch } = row;
  return db
    .insertInto('redirect_settings')
    .values(row)
    .onConflict((oc) => oc.column('site_id').doUpdateSet(patch))
    .execute();
}

/** The rule with this source on the site, if any. */
export function idBySourceHash(db: Executor, siteId: string, hash: string) {
  return db.selectFrom('redirects').select('id').where('site_id', '=', siteId).where('source_hash', '=', hash).executeTakeFirst();
}

export function deleteBySourceHash(db: Executor, siteId: string, hash: string) {
  return db.deleteFrom('redirects').where('site_id', '=', siteId).where('source_hash', '=', hash).execute();
}

/** Points every rule whose target is `from` at `to`. */
export function retarget(db: Executor, siteId: string, from: string, to: string, at: string) {
  return db.updateTable('redirects').set({ target_url: to, updated_at: at }).where('site_id', '=', siteId).where('target_url', '=', from).execute();
}

export async function stats(db: Executor, siteId: string) {
  const row = await db
    .selectFrom('redirects')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.sum<number>(eb.case().when('is_active', '=', true).then(1).else(0).end()).as('active'),
      eb.fn.sum<number>('hit_count').as('hits'),
    ])
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  const total = Number(row.total);
  const active = Number(row.active ?? 0);
  return { total, active, inactive: total - active, totalHits: Number(row.hits ?? 0) };
}

export async function bulkDelete(db: Executor, siteId: string, ids: readonly number[]): Promise<number> {
  const res = await db.deleteFrom('redirects').where('site_id', '=', siteId).where('id', 'in', ids).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export function insertMany(db: Executor, rows: Insertable<RedirectsTable>[]) {
  return db.insertInto('redirects').values(rows).execute();
}

/** Rows for the export, by id, `limit` at a time after `afterId` (streamed). */
export function exportBatch(db: Executor, siteId: string, afterId: number, limit: number) {
  return db
    .selectFrom('redirects')
    .select(['id', 'source_path', 'target_url', 'status_code', 'is_regex', 'is_active', 'preserve_query_string', 'hit_count'])
    .where('site_id', '=', siteId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
}

// ---- hits, logs and misses (written in batches by hits.ts) ----

/** Adds counted hits to rules that still exist; answers the ids that do. */
export async function addHits(db: Executor, siteId: string, id: number, n: number, lastHitAt: string): Promise<boolean> {
  const res = await db
    .updateTable('redirects')
    .set((eb) => ({ hit_count: eb('hit_count', '+', n), last_hit_at: lastHitAt }))
    .where('site_id', '=', siteId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

type LogArgs = { [K in 'site_id' | 'redirect_id' | 'referrer' | 'user_agent' | 'ip_address' | 'created_at']: Array<RedirectLogsTable[K] | null> };

/** One multi-row insert of hit logs, built once per batch size (db/prepared.ts): a flush writes thousands. */
const insertLogBatch = prepared((db, p: LogArgs) =>
  db.insertInto('redirect_logs').values(
    p.site_id.map((_, i) => ({
      site_id: p.site_id[i] as string,
      redirect_id: p.redirect_id[i] as number,
      referrer: p.referrer[i],
      user_agent: p.user_agent[i],
      ip_address: p.ip_address[i],
      created_at: p.created_at[i] as string,
    })),
  ),
);

export async function insertLogs(db: Executor, rows: Insertable<RedirectLogsTable>[]) {
  if (!rows.length) return;
  const col = <K extends keyof LogArgs>(k: K) => rows.map((r) => (r[k] ?? null) as LogArgs[K][number]);
  await insertLogBatch.execute(db, {
    site_id: col('site_id'),
    redirect_id: col('redirect_id'),
    referrer: col('referrer'),
    user_agent: col('user_agent'),
    ip_address: col('ip_address'),
    created_at: col('created_at'),
  });
}

export async function upsertMisses(db: Executor, rows: Insertable<RedirectMissesTable>[]) {
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto('redirect_misses')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) =>
        oc.columns(['site_id', 'path_hash']).doUpdateSet((eb) => ({
          hits: eb('redirect_misses.hits', '+', eb.ref('excluded.hits')),
          last_seen_at: eb.ref('excluded.last_seen_at'),
          last_referrer: eb.fn.coalesce('excluded.last_referrer', 'redirect_misses.last_referrer'),
        })),
      )
      .execute();
  }
}

export function listLogs(db: Executor, siteId: string, redirectId: number) {
  return db.selectFrom('redirect_logs').selectAll().where('site_id', '=', siteId).where('redirect_id', '=', redirectId);
}

/** The 404 log, optionally only paths containing `search` (case-insensitive on both databases). */
export function listMisses(db: Executor, siteId: string, search?: string) {
  const q = db.selectFrom('redirect_misses').selectAll().where('site_id', '=', siteId);
  return search ? q.where(dialectOf(db).containsText(['path'], search)) : q;
}

export function findMiss(db: Executor, siteId: string, id: number) {
  return db.selectFrom('redirect_misses').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

export async function deleteMiss(db: Executor, siteId: string, id: number): Promise<boolean> {
  const res = await db.deleteFrom('redirect_misses').where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

export function deleteMissByHash(db: Executor, siteId: string, pathHash: string) {
  return db.deleteFrom('redirect_misses').where('site_id', '=', siteId).where('path_hash', '=', pathHash).execute();
}

// ---- retention (every site, by each site's setting; decisions H26, R8) ----

export const DEFAULT_LOG_RETENTION_DAYS = 90;

/** The retention periods in use: each distinct site setting, and the default for sites without one. */
export async function retentionPeriods(db: Executor): Promise<number[]> {
  const rows = await db.selectFrom('redirect_settings').select('log_retention_days').distinct().execute();
  return [...new Set([DEFAULT_LOG_RETENTION_DAYS, ...rows.map((r) => Number(r.log_retention_days))])];
}

/** Deletes up to `limit` log rows and misses older than `cutoff` of the sites whose retention is `days`. */
export async function deleteOldLogs(db: Executor, days: number, cutoff: string, limit: number): Promise<number> {
  const sitesWithDays = db.selectFrom('redirect_settings').select('site_id').where('log_retention_days', '=', days);
  const sitesWithSetting = db.selectFrom('redirect_settings').select('site_id');
  const ofSites = (qb: any) =>
    days === DEFAULT_LOG_RETENTION_DAYS
      ? qb.where((eb: any) => eb.or([eb('site_id', 'in', sitesWithDays), eb('site_id', 'not in', sitesWithSetting)]))
      : qb.where('site_id', 'in', sitesWithDays);
  const logs = ofSites(db.selectFrom('redirect_logs').select('id').where('created_at', '<', cutoff)).limit(limit);
  const a = await db.deleteFrom('redirect_logs').where('id', 'in', logs).executeTakeFirst();
  const misses = ofSites(db.selectFrom('redirect_misses').select('id').where('last_seen_at', '<', cutoff)).limit(limit);
  const b = await db.deleteFrom('redirect_misses').where('id', 'in', misses).executeTakeFirst();
  return Number(a.numDeletedRows) + Number(b.numDeletedRows);
}
