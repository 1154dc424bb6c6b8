import type { Kysely, SelectQueryBuilder } from 'kysely';
import { Type, type TProperties } from 'typebox';
import { dialectOf } from '../db/dialect.js';
import type { DB, Executor } from '../db/types.js';
import { applyCommonFilters, CommonFilters, type CommonFilterValues, UuidFilters } from '../shared/list-filters.js';
import { type ListQuery, listQuerySchema, paginate } from '../shared/pagination.js';

/** Values looked up per statement by `takenValues`. */
const TAKEN_CHUNK = 100;

type Row = Record<string, unknown>;
/** A record's address within its site: `{ id }`, or `{ locale, slug }` for slug-addressed resources. */
export type RecordKey = Record<string, string | number>;
type AnyQb = SelectQueryBuilder<any, any, any>;
export type CommonFilterName = keyof typeof CommonFilters;

/** How a resource's list is queried (decisions G5, G6): sorting, search, the shared filters it exposes, its own. */
export interface ListSpec<P extends TProperties = TProperties, Q = Row> {
  /** Columns `sortBy` accepts; the default order is `created_at desc`, then id. */
  sort: readonly string[];
  /** Columns `search` looks in (case-insensitive contains). */
  search: readonly string[];
  /** The shared filters this list exposes; others sent are ignored, never turned into SQL. */
  common: readonly CommonFilterName[];
  /** The type of the list's ids, which `ids[]` and `excludeIds[]` take: integers (the default) or UUIDs (media). */
  idType?: 'integer' | 'uuid';
  /** The list's own filters: their query schemas, and their SQL. */
  filters?: P;
  apply?: (qb: AnyQb, query: Q, ctx: { db: Executor; siteId: string }) => AnyQb | Promise<AnyQb>;
}

/** The query-string schema of a list (page, limit, sort, dates, the exposed shared filters, its own). */
export function listQueryFor<P extends TProperties = {}>(spec: ListSpec<P, any>) {
  const exposed: TProperties = {};
  for (const name of spec.common) exposed[name] = spec.idType === 'uuid' && (name === 'ids' || name === 'excludeIds') ? UuidFilters[name] : CommonFilters[name];
  if (exposed.search) exposed.search = Type.Optional({ ...CommonFilters.search, description: `Case-insensitive text search in ${spec.search.join(', ')}` });
  // Typed as if every shared filter were exposed: they are all optional, and unexposed ones are never sent.
  return listQuerySchema(spec.sort, { ...exposed, ...spec.filters } as typeof CommonFilters & P, { defaultSort: 'created_at desc' });
}

/**
 * The statements every site-scoped table needs, each one query, each filtered by `site_id`.
 * Resources build their services on it; their own queries stay in their own repositories.
 */
export function tableRepository(table: keyof DB & string) {
  const kdb = (db: Executor) => db as unknown as Kysely<any>;
  const where = (qb: any, siteId: string, key: RecordKey) => {
    let q = qb.where(`${table}.site_id`, '=', siteId);
    for (const [column, value] of Object.entries(key)) q = q.where(`${table}.${column}`, '=', value);
    return q;
  };
  return {
    table,

    find(db: Executor, siteId: string, key: RecordKey, columns?: readonly string[]): Promise<Row | undefined> {
      const q = kdb(db).selectFrom(table);
      return where(columns ? q.select(columns as string[]) : q.selectAll(), siteId, key).executeTakeFirst();
    },

    /** Rows by ids, in no particular order. */
    findMany(db: Executor, siteId: string, ids: readonly number[], columns?: readonly string[]): Promise<Row[]> {
      if (!ids.length) return Promise.resolve([]);
      const q = kdb(db).selectFrom(table);
      return (columns ? q.select(columns as string[]) : q.selectAll()).where('site_id', '=', siteId).where('id', 'in', ids).execute();
    },

    /** One page of a list: the shared filters, the list's own, sorted, counted in SQL. */
    async list<Q extends ListQuery & CommonFilterValues>(db: Executor, siteId: string, query: Q, spec: ListSpec<any, any>, columns?: readonly string[]) {
      const exposed: CommonFilterValues = { dateFrom: query.dateFrom, dateTo: query.dateTo };
      for (const name of spec.common) (exposed as Row)[name] = query[name];
      const selected = kdb(db).selectFrom(table);
      let base: AnyQb = (columns ? selected.select(columns as string[]) : selected.selectAll()).where('site_id', '=', siteId);
      base = applyCommonFilters(base, dialectOf(kdb(db)), exposed, spec.search);
      if (spec.apply) base = await spec.apply(base, query, { db, siteId });
      const order = query.sortOrder ?? (query.sortBy ? 'asc' : 'desc');
      return paginate(base, query, (qb) => qb.orderBy(query.sortBy ?? 'created_at', order).orderBy('id', order)) as Promise<{ rows: Row[]; total: number }>;
    },

    async insert(db: Executor, row: Row): Promise<number> {
      const { id } = await kdb(db).insertInto(table).values(row).returning('id').executeTakeFirstOrThrow();
      return Number(id);
    },

    /** Inserts a row that brings its own id (a uuid). */
    async insertKeyed(db: Executor, row: Row & { id: string }): Promise<void> {
      await kdb(db).insertInto(table).values(row).execute();
    },

    update(db: Executor, siteId: string, key: RecordKey, patch: Row) {
      return where(kdb(db).updateTable(table).set(patch), siteId, key).execute();
    },

    async delete(db: Executor, siteId: string, key: RecordKey): Promise<boolean> {
      const res = await where(kdb(db).deleteFrom(table), siteId, key).executeTakeFirst();
      return Number(res.numDeletedRows) > 0;
    },

    /**
     * Which of these values of `column` the site's rows already hold, in chunks of 100: one
     * indexed query each, short enough (about 0.3 ms, 3-14 ms for 500 on a busy machine) that
     * other sites' requests get their turn between them (decisions HN11).
     */
    async takenValues(db: Executor, siteId: string, column: string, values: readonly string[]): Promise<Set<string>> {
      const out = new Set<string>();
      for (let i = 0; i < values.length; i += TAKEN_CHUNK) {
        const rows = await kdb(db)
          .selectFrom(table)
          .select(column)
          .where('site_id', '=', siteId)
          .where(column, 'in', values.slice(i, i + TAKEN_CHUNK))
          .execute();
        for (const r of rows) out.add(String(r[column]));
      }
      return out;
    },

    /** Rows sharing the `scope` columns (e.g. `{ locale }`) holding any of these column values (other than `exceptId`): one indexed query. */
    clashes(db: Executor, siteId: string, scope: Row, values: Row, exceptId?: number | string): Promise<Row[]> {
      const pairs = Object.entries(values).filter(([, v]) => v !== undefined);
      if (!pairs.length) return Promise.resolve([]);
      let q = kdb(db)
        .selectFrom(table)
        .select(['id', ...pairs.map(([c]) => c)])
        .where('site_id', '=', siteId)
        .where((eb: any) => eb.or(pairs.map(([c, v]) => eb(c, '=', v))));
      for (const [column, value] of Object.entries(scope)) q = q.where(column, '=', value);
      if (exceptId) q = q.where('id', '!=', exceptId);
      return q.execute();
    },
  };
}
