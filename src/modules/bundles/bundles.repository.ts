import { sql, type RawBuilder } from 'kysely';
import type { Executor, Timestamp } from '../../db/types.js';

/**
 * The bundle's own SQL. Export and import read and write every bundled table of one site as
 * plain rows (bundle-tables.ts says which columns), so this repository is generic over table
 * names; every statement filters by the site's key column.
 */
export interface BundleIdMapTable {
  site_id: string;
  source_site_id: string;
  table_name: string;
  source_id: string;
  target_id: string;
}

export interface SiteExportsTable {
  id: string;
  site_id: string;
  status: 'queued' | 'running' | 'ready' | 'failed';
  with_submissions: boolean | number;
  storage_key: string | null;
  bytes: number | null;
  error: string | null;
  created_at: Timestamp;
  finished_at: Timestamp | null;
  expires_at: Timestamp | null;
  /** Written every few seconds while the export runs (migration 0037). */
  heartbeat_at?: Timestamp | null;
}

declare module '../../db/types.js' {
  interface DB {
    bundle_id_map: BundleIdMapTable;
    site_exports: SiteExportsTable;
  }
}

type Row = Record<string, unknown>;
type Where = Record<string, unknown>;

function whereOf(siteColumn: string, siteId: string, where: Where): RawBuilder<unknown> {
  const parts = [sql`${sql.ref(siteColumn)} = ${siteId}`];
  for (const [column, value] of Object.entries(where)) parts.push(value === null ? sql`${sql.ref(column)} is null` : sql`${sql.ref(column)} = ${value}`);
  return sql.join(parts, sql` and `);
}

/**
 * One page of a site's rows of `table`, ordered by `orderBy` (unique together): after the row
 * whose `orderBy` values are `after` (keyset; the columns must not be null), else by offset.
 */
export async function pageOfRows(
  db: Executor,
  table: string,
  siteColumn: string,
  siteId: string,
  orderBy: string[],
  page: { afterId?: unknown; after?: unknown[]; offset?: number; limit: number },
): Promise<Row[]> {
  const afterValues = page.after ?? (page.afterId === undefined ? undefined : [page.afterId]);
  const after = afterValues ? sql`and (${sql.join(orderBy.map((c) => sql.ref(c)))}) > (${sql.join(afterValues.map((v) => sql`${v}`))})` : sql``;
  const offset = page.offset ? sql`offset ${page.offset}` : sql``;
  const order = sql.join(orderBy.map((c) => sql.ref(c)));
  const { rows } = await sql<Row>`select * from ${sql.table(table)} where ${sql.ref(siteColumn)} = ${siteId} ${after}
    order by ${order} limit ${page.limit} ${offset}`.execute(db);
  return rows;
}

export async function findRow(db: Executor, table: string, siteColumn: string, siteId: string, where: Where): Promise<Row | undefined> {
  const { rows } = await sql<Row>`select * from ${sql.table(table)} where ${whereOf(siteColumn, siteId, where)} limit 1`.execute(db);
  return rows[0];
}

/** Inserts a row; answers its `id` when the table has one. */
export async function insertRow(db: Executor, table: string, values: Row, returningId: boolean): Promise<unknown> {
  const names = Object.keys(values);
  const returning = returningId ? sql`returning id` : sql``;
  const { rows } = await sql<{ id: unknown }>`insert into ${sql.table(table)} (${sql.join(names.map((n) => sql.ref(n)))})
    values (${sql.join(names.map((n) => values[n]))}) ${returning}`.execute(db);
  return rows[0]?.id;
}

export async function updateRow(db: Executor, table: string, siteColumn: string, siteId: string, where: Where, values: Row): Promise<void> {
  const set = Object.entries(values).map(([c, v]) => sql`${sql.ref(c)} = ${v}`);
  if (!set.length) return;
  await sql`update ${sql.table(table)} set ${sql.join(set)} where ${whereOf(siteColumn, siteId, where)}`.execute(db);
}

/**
 * What earlier imports of `sourceSiteId`'s bundles (or this one, so far) made in `siteId` of the
 * source record spelled any of `sourceIds` in any of `tables` (one table and id for a row; the UUID
 * tables and both spellings of a UUID for a reference in text).
 */
export async function targetOf(db: Executor, siteId: string, sourceSiteId: string, tables: string[], sourceIds: string[]): Promise<string | undefined> {
  const row = await db
    .selectFrom('bundle_id_map')
    .select('target_id')
    .where('site_id', '=', siteId)
    .where('source_site_id', '=', sourceSiteId)
    .where('table_name', 'in', tables)
    .where('source_id', 'in', sourceIds)
    .executeTakeFirst();
  return row?.target_id;
}

export async function saveIdMap(db: Executor, rows: BundleIdMapTable[]): Promise<void> {
  if (!rows.length) return;
  await db
    .insertInto('bundle_id_map')
    .values(rows)
    .onConflict((oc) => oc.columns(['site_id', 'source_site_id', 'table_name', 'source_id']).doUpdateSet((eb) => ({ target_id: eb.ref('excluded.target_id') })))
    .execute();
}

// ---- export jobs ----

export async function insertExport(db: Executor, row: SiteExportsTable): Promise<void> {
  await db.insertInto('site_exports').values(row).execute();
}

export async function findExport(db: Executor, siteId: string, id: string): Promise<SiteExportsTable | undefined> {
  return db.selectFrom('site_exports').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

export async function updateExport(db: Executor, siteId: string, id: string, patch: Partial<SiteExportsTable>): Promise<void> {
  await db.updateTable('site_exports').set(patch).where('site_id', '=', siteId).where('id', '=', id).execute();
}

/**
 * Marks `running` exports whose heartbeat is older than `staleBefore` (or missing) as failed with
 * `error`; answers how many. `onlyId` limits it to one export.
 */
export async function failStaleExports(db: Executor, staleBefore: string, error: string, at: string, onlyId?: string): Promise<number> {
  let q = db
    .updateTable('site_exports')
    .set({ status: 'failed', error, finished_at: at })
    .where('status', '=', 'running')
    .where((eb) => eb.or([eb('heartbeat_at', 'is', null), eb('heartbeat_at', '<', staleBefore)]));
  if (onlyId) q = q.where('id', '=', onlyId);
  const result = await q.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Removes a site an import made, when the import fails or was a dry run (its rows go with it). */
export async function deleteSite(db: Executor, siteId: string): Promise<void> {
  await db.deleteFrom('sites').where('id', '=', siteId).execute();
}

/** Ready exports past their hour whose file is still stored, across sites (the purge task's). */
export async function expiredExports(db: Executor, now: string, limit: number) {
  return db
    .selectFrom('site_exports')
    .select(['site_id', 'id', 'storage_key'])
    .where('status', '=', 'ready')
    .where('storage_key', 'is not', null)
    .where('expires_at', '<', now)
    .limit(limit)
    .execute();
}
