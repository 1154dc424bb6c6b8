import { sql } from 'kysely';
import type { AutoId, Bool, Executor, Timestamp } from '../../db/types.js';
import { prepared } from '../../db/prepared.js';
import { addDays, earlierDay } from './search-console.dates.js';

export interface SearchConnectionsTable {
  site_id: string;
  property_url: string;
  auth_type: 'service_account' | 'refresh_token';
  client_email: string | null;
  /** The credentials JSON as a SecretBox value (decisions H25): never answered. */
  credentials: string;
  status: 'syncing' | 'ok' | 'error';
  last_error: string | null;
  connected_at: Timestamp;
  last_sync_at: Timestamp | null;
  backfilled_from: string | null;
  next_sync_at: Timestamp | null;
  indexing_submitted_until: Timestamp | null;
  periods_through: string | null;
}

export type SearchKind = 'query' | 'page';

export interface SearchKeysTable {
  id: AutoId;
  site_id: string;
  kind: SearchKind;
  key: string;
}

export interface SearchDailyTotalsTable {
  site_id: string;
  date: string;
  clicks: number;
  impressions: number;
  position_sum: number;
}

export interface SearchDailyRowsTable {
  site_id: string;
  kind: SearchKind;
  date: string;
  key_id: number;
  clicks: number;
  impressions: number;
  position_sum: number;
}

export interface SearchPeriodKeysTable {
  site_id: string;
  period: string;
  kind: SearchKind;
  key_id: number;
  clicks: number;
  impressions: number;
  position_sum: number;
  prev_clicks: number;
  prev_impressions: number;
}

export interface SearchIndexingLogsTable {
  id: AutoId;
  site_id: string;
  url: string;
  type: 'URL_UPDATED' | 'URL_DELETED';
  status: 'success' | 'failed';
  error: string | null;
  submitted_at: Timestamp;
}

export interface ContentLinksOutTable {
  site_id: string;
  content_id: number | null;
  site_block_id: number | null;
  target_url: string;
  internal: Bool;
}

declare module '../../db/types.js' {
  interface DB {
    search_connections: SearchConnectionsTable;
    search_keys: SearchKeysTable;
    search_daily_totals: SearchDailyTotalsTable;
    search_daily_rows: SearchDailyRowsTable;
    search_period_keys: SearchPeriodKeysTable;
    search_indexing_logs: SearchIndexingLogsTable;
    content_links_out: ContentLinksOutTable;
  }
}

// ---- the connection ----

export const findConnection = (db: Executor, siteId: string) =>
  db.selectFrom('search_connections').selectAll().where('site_id', '=', siteId).executeTakeFirst();

export type ConnectionRow = NonNullable<Awaited<ReturnType<typeof findConnection>>>;

/** Stores a new connection, replacing an earlier one. */
export function saveConnection(db: Executor, row: ConnectionRow) {
  const { site_id: _site, ...changes } = row;
  return db
    .insertInto('search_connections')
    .values(row)
    .onConflict((oc) => oc.column('site_id').doUpdateSet(changes))
    .execute();
}

export function updateConnection(db: Executor, siteId: string, changes: Partial<Omit<ConnectionRow, 'site_id'>>) {
  return db.updateTable('search_connections').set(changes).where('site_id', '=', siteId).execute();
}

/** Deletes the connection and every synced row of the site. */
export async function deleteConnection(db: Executor, siteId: string): Promise<boolean> {
  for (const table of ['search_period_keys', 'search_daily_rows', 'search_daily_totals', 'search_keys'] as const) {
    await db.deleteFrom(table).where('site_id', '=', siteId).execute();
  }
  const result = await db.deleteFrom('search_connections').where('site_id', '=', siteId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Every connection Google has not refused. */
export const workingConnections = (db: Executor) => db.selectFrom('search_connections').selectAll().where('status', '!=', 'error').execute();

export const SYNC_JOB_KEY = 'search_console.sync';

/** Claims the connections whose next sync is due (next_sync_at set to null, so one process queues each once). */
export async function claimDueConnections(db: Executor, now: string): Promise<string[]> {
  const rows = await db
    .updateTable('search_connections')
    .set({ next_sync_at: null })
    .where('next_sync_at', '<=', now)
    .where('status', '!=', 'error')
    // A run still queued or finishing is left alone: it would swallow the new one.
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('jobs')
            .select('jobs.id')
            .whereRef('jobs.site_id', '=', 'search_connections.site_id')
            .where('jobs.key', '=', SYNC_JOB_KEY)
            .where('jobs.failed_at', 'is', null),
        ),
      ),
    )
    .returning('site_id')
    .execute();
  return rows.map((r) => r.site_id);
}

/** The first and last day stored (totals), or nulls. */
export async function dataRange(db: Executor, siteId: string): Promise<{ from: string | null; through: string | null }> {
  const r = await db
    .selectFrom('search_daily_totals')
    .select((eb) => [eb.fn.min('date').as('from'), eb.fn.max('date').as('through')])
    .where('site_id', '=', siteId)
    .executeTakeFirst();
  return { from: r?.from ?? null, through: r?.through ?? null };
}

// ---- the sync: one day replaced at a time ----

const KEY_CHUNK = 1000;
const ROW_CHUNK = 2000;

/** The ids of `keys` of a kind, creating the missing ones. */
async function keyIds(tx: Executor, siteId: string, kind: SearchKind, keys: string[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (let i = 0; i < keys.length; i += KEY_CHUNK) {
    const chunk = keys.slice(i, i + KEY_CHUNK);
    await tx
      .insertInto('search_keys')
      .values(chunk.map((key) => ({ site_id: siteId, kind, key })))
      .onConflict((oc) => oc.columns(['site_id', 'kind', 'key']).doNothing())
      .execute();
    const rows = await tx
      .selectFrom('search_keys')
      .select(['id', 'key'])
      .where('site_id', '=', siteId)
      .where('kind', '=', kind)
      .where('key', 'in', chunk)
      .execute();
    for (const r of rows) ids.set(r.key, Number(r.id));
  }
  return ids;
}

export interface DayMetrics {
  clicks: number;
  impressions: number;
  position: number;
}

export interface SyncedDay {
  date: string;
  totals: DayMetrics;
  rows: Record<SearchKind, Array<DayMetrics & { key: string }>>;
}

/** Replaces one day's totals and rows (call inside a transaction: a re-run stores the same rows). */
export async function replaceDay(tx: Executor, siteId: string, day: SyncedDay): Promise<void> {
  await tx.deleteFrom('search_daily_totals').where('site_id', '=', siteId).where('date', '=', day.date).execute();
  await tx.deleteFrom('search_daily_rows').where('site_id', '=', siteId).where('date', '=', day.date).execute();
  const t = day.totals;
  await tx
    .insertInto('search_daily_totals')
    .values({ site_id: siteId, date: day.date, clicks: t.clicks, impressions: t.impressions, position_sum: t.position * t.impressions })
    .execute();
  for (const kind of ['query', 'page'] as const) {
    // Google answers each key once a day; a repeated key would break the primary key, so the first wins.
    const rows = [...new Map(day.rows[kind].map((r) => [r.key, r])).values()];
    const ids = await keyIds(
      tx,
      siteId,
      kind,
      rows.map((r) => r.key),
    );
    for (let i = 0; i < rows.length; i += ROW_CHUNK) {
      await tx
        .insertInto('search_daily_rows')
        .values(
          rows.slice(i, i + ROW_CHUNK).map((r) => ({
            site_id: siteId,
            kind,
            date: day.date,
            key_id: ids.get(r.key)!,
            clicks: r.clicks,
            impressions: r.impressions,
            position_sum: r.position * r.impressions,
          })),
        )
        .execute();
    }
  }
}

// ---- the reports: local tables only ----

export interface Sums {
  clicks: number;
  impressions: number;
  positionSum: number;
}

/** Totals of a date range (inclusive) from the daily totals. */
export async function totals(db: Executor, siteId: string, from: string, to: string): Promise<Sums> {
  const r = await db
    .selectFrom('search_daily_totals')
    .select((eb) => [eb.fn.sum<number>('clicks').as('clicks'), eb.fn.sum<number>('impressions').as('impressions'), eb.fn.sum<number>('position_sum').as('ps')])
    .where('site_id', '=', siteId)
    .where('date', '>=', from)
    .where('date', '<=', to)
    .executeTakeFirst();
  return { clicks: Number(r?.clicks ?? 0), impressions: Number(r?.impressions ?? 0), positionSum: Number(r?.ps ?? 0) };
}

export interface ChangeRow {
  key: string;
  clicks: number;
  impressions: number;
  position_sum: number;
  change: number;
  prev_clicks: number;
  total: number;
}

export interface Windows {
  prevStart: string;
  curStart: string;
  curEnd: string;
}

export interface ChangeQuery extends Windows {
  kind: SearchKind;
  direction: 'up' | 'down';
  minImpressions: number;
  limit: number;
  offset: number;
  /** A named period whose snapshot is current: read it instead of the daily rows. */
  period: string | null;
}

/** Each key's sums in the current and the previous window, from the daily rows of `from`..`to` (within the windows). */
const windowSums = (siteId: string, kind: SearchKind, w: Windows, from: string, to: string) => {
  const cur = (col: string) => sql`sum(case when date >= ${w.curStart} then ${sql.ref(col)} else 0 end)`;
  const prev = (col: string) => sql`sum(case when date < ${w.curStart} then ${sql.ref(col)} else 0 end)`;
  return sql`select key_id, ${cur('clicks')} as clicks, ${cur('impressions')} as impressions, ${cur('position_sum')} as position_sum,
      ${prev('clicks')} as prev_clicks, ${prev('impressions')} as prev_impressions
    from search_daily_rows
    where site_id = ${siteId} and kind = ${kind} and date >= ${from} and date <= ${to}
    group by key_id`;
};

/**
 * One page of keys whose clicks changed between two adjacent windows, with the total count. The
 * sums come from the period snapshot when it is current (one read of the site's keys), else from
 * one pass over the daily rows of both windows; only the keys that qualify are joined to their
 * text for the tie order.
 */
export async function changedKeys(db: Executor, siteId: string, q: ChangeQuery): Promise<ChangeRow[]> {
  const sums = q.period
    ? sql`select key_id, clicks, impressions, position_sum, prev_clicks, prev_impressions from search_period_keys
        where site_id = ${siteId} and period = ${q.period} and kind = ${q.kind}`
    : windowSums(siteId, q.kind, q, q.prevStart, q.curEnd);
  const filter = q.direction === 'up' ? sql`a.clicks > a.prev_clicks` : sql`a.clicks < a.prev_clicks`;
  const order = q.direction === 'up' ? sql`change desc, a.clicks desc, k.key` : sql`change asc, k.key`;
  const { rows } = await sql<ChangeRow>`
    select k.key, a.clicks, a.impressions, a.position_sum, a.clicks - a.prev_clicks as change, a.prev_clicks, count(*) over () as total
    from (${sums}) a
    join search_keys k on k.id = a.key_id and k.site_id = ${siteId}
    where ${filter} and (a.impressions >= ${q.minImpressions} or a.prev_impressions >= ${q.minImpressions})
    order by ${order}
    limit ${q.limit} offset ${q.offset}`.execute(db);
  return rows;
}

/** How many keys changed (for a page past the last one, where the window count has no row). */
export async function countChangedKeys(db: Executor, siteId: string, q: ChangeQuery): Promise<number> {
  const rows = await changedKeys(db, siteId, { ...q, limit: 1, offset: 0 });
  return rows.length ? Number(rows[0]!.total) : 0;
}

/** Days a snapshot statement reads at most: long periods are summed in slices, so no statement holds SQLite long. */
const SNAPSHOT_SLICE_DAYS = 45;

/** Rebuilds a named period's snapshot of one kind: each key's sums in its two windows, added up slice by slice. */
export async function rebuildPeriod(db: Executor, siteId: string, period: string, kind: SearchKind, w: Windows): Promise<void> {
  await db.deleteFrom('search_period_keys').where('site_id', '=', siteId).where('period', '=', period).where('kind', '=', kind).execute();
  for (let from = w.prevStart; from <= w.curEnd; from = addDays(from, SNAPSHOT_SLICE_DAYS)) {
    const to = earlierDay(addDays(from, SNAPSHOT_SLICE_DAYS - 1), w.curEnd);
    await sql`insert into search_period_keys (site_id, period, kind, key_id, clicks, impressions, position_sum, prev_clicks, prev_impressions)
      select ${siteId}, ${period}, ${kind}, s.key_id, s.clicks, s.impressions, s.position_sum, s.prev_clicks, s.prev_impressions
      from (${windowSums(siteId, kind, w, from, to)}) s where true
      on conflict (site_id, period, kind, key_id) do update set
        clicks = search_period_keys.clicks + excluded.clicks,
        impressions = search_period_keys.impressions + excluded.impressions,
        position_sum = search_period_keys.position_sum + excluded.position_sum,
        prev_clicks = search_period_keys.prev_clicks + excluded.prev_clicks,
        prev_impressions = search_period_keys.prev_impressions + excluded.prev_impressions`.execute(db);
  }
}

// ---- links the site's own contents and page blocks make ----

export async function replaceLinks(
  db: Executor,
  siteId: string,
  source: { content_id: number } | { site_block_id: number },
  links: Array<{ url: string; internal: boolean }>,
  fresh = false,
) {
  const [column, id] = 'content_id' in source ? (['content_id', source.content_id] as const) : (['site_block_id', source.site_block_id] as const);
  // A source inserted in this transaction has no links yet.
  if (!fresh) await db.deleteFrom('content_links_out').where('site_id', '=', siteId).where(column, '=', id).execute();
  if (!links.length) return;
  await insertLinks.execute(db, {
    siteId,
    contentId: column === 'content_id' ? id : undefined,
    siteBlockId: column === 'site_block_id' ? id : undefined,
    urls: links.map((l) => l.url),
    internals: links.map((l) => l.internal),
  });
}

// Prepared once per number of links and source kind (db/prepared.ts): every content write with links runs it.
const insertLinks = prepared((db, p: { siteId: string; contentId?: number; siteBlockId?: number; urls: string[]; internals: boolean[] }) =>
  db.insertInto('content_links_out').values(
    p.urls.map((url, i) => ({
      site_id: p.siteId,
      content_id: p.contentId ?? null,
      site_block_id: p.siteBlockId ?? null,
      target_url: url,
      internal: p.internals[i]!,
    })),
  ),
);

/** The top targets by how many published contents and published page blocks link to them. */
export async function topLinks(db: Executor, siteId: string, internal: boolean, limit: number) {
  const { rows } = await sql<{ target_url: string; count: number }>`
    select l.target_url, count(distinct coalesce(l.content_id, -l.site_block_id)) as count
    from content_links_out l
    left join contents c on c.id = l.content_id and c.site_id = ${siteId}
    left join site_blocks b on b.id = l.site_block_id and b.site_id = ${siteId}
    where l.site_id = ${siteId} and l.internal = ${internal}
      and (c.status = 'published' or (b.type = 'page' and b.status = 'published'))
    group by l.target_url
    order by count desc, l.target_url
    limit ${limit}`.execute(db);
  return rows.map((r) => ({ targetUrl: r.target_url, count: Number(r.count) }));
}

// ---- search-indexing log ----

export const indexingLogs = (db: Executor, siteId: string) =>
  db.selectFrom('search_indexing_logs').select(['id', 'url', 'type', 'status', 'error', 'submitted_at']).where('site_id', '=', siteId);

export async function indexingStats(db: Executor, siteId: string) {
  const r = await db
    .selectFrom('search_indexing_logs')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.sum<number>(eb.case().when('status', '=', 'success').then(1).else(0).end()).as('success'),
      eb.fn.max('submitted_at').as('last'),
    ])
    .where('site_id', '=', siteId)
    .executeTakeFirst();
  const total = Number(r?.total ?? 0);
  const success = Number(r?.success ?? 0);
  return { total, success, failed: total - success, lastSubmittedAt: r?.last ? new Date(r.last).toISOString() : null };
}

export function insertIndexingLog(db: Executor, row: Omit<SearchIndexingLogsTable, 'id'>) {
  return db.insertInto('search_indexing_logs').values(row).execute();
}

/** Submissions made since `since` (the Pacific day's quota). */
export async function submittedSince(db: Executor, siteId: string, since: string): Promise<number> {
  const r = await db
    .selectFrom('search_indexing_logs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('site_id', '=', siteId)
    .where('submitted_at', '>=', since)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}
