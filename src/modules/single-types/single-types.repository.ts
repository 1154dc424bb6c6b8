import type { Insertable, Selectable, Updateable } from 'kysely';
import type { AutoId, Executor, Json, Timestamp } from '../../db/types.js';
import type { DialectName } from '../../db/connect.js';
import { applyCommonFilters, type CommonFilterValues } from '../../shared/list-filters.js';
import { paginate, type ListQuery } from '../../shared/pagination.js';

export interface SingleTypesTable {
  id: AutoId;
  site_id: string;
  slug: string;
  name: string;
  description: string | null;
  locale: string;
  data: Json<Record<string, unknown>>;
  schema: Json<unknown[]> | null;
  body: Json<Record<string, unknown>> | null;
  body_html: string;
  meta_title: string | null;
  meta_description: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    single_types: SingleTypesTable;
  }
}

export type SingleTypeRow = Selectable<SingleTypesTable>;

export function findSingleType(db: Executor, siteId: string, locale: string, slug: string) {
  return db.selectFrom('single_types').selectAll().where('site_id', '=', siteId).where('locale', '=', locale).where('slug', '=', slug).executeTakeFirst();
}

/** The list selects only what the list shows: never the data, schema or body. */
export async function listSingleTypes(db: Executor, dialect: DialectName, siteId: string, query: ListQuery & CommonFilterValues) {
  const base = applyCommonFilters(
    db.selectFrom('single_types').select(['id', 'slug', 'name', 'locale', 'created_at', 'updated_at']).where('site_id', '=', siteId),
    dialect,
    query,
    ['name', 'slug'],
  );
  const column = (query.sortBy ?? 'created_at') as 'created_at' | 'updated_at' | 'name' | 'slug';
  const order = query.sortOrder ?? (query.sortBy ? 'asc' : 'desc');
  return paginate(base, query, (qb) => qb.orderBy(column, order).orderBy('id', order));
}

export async function insertSingleType(db: Executor, row: Insertable<SingleTypesTable>): Promise<number> {
  const { id } = await db.insertInto('single_types').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export function updateSingleType(db: Executor, siteId: string, id: number, patch: Updateable<SingleTypesTable>) {
  return db.updateTable('single_types').set(patch).where('site_id', '=', siteId).where('id', '=', id).execute();
}

export async function deleteSingleType(db: Executor, siteId: string, locale: string, slug: string): Promise<boolean> {
  const res = await db.deleteFrom('single_types').where('site_id', '=', siteId).where('locale', '=', locale).where('slug', '=', slug).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
