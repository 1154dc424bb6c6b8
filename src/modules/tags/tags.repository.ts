import type { Insertable, Selectable, Updateable } from 'kysely';
import type { AutoId, Executor, Timestamp } from '../../db/types.js';
import type { DialectName } from '../../db/connect.js';
import { applyCommonFilters, type CommonFilterValues } from '../../shared/list-filters.js';
import { paginate, type ListQuery } from '../../shared/pagination.js';

export interface TagsTable {
  id: AutoId;
  site_id: string;
  name: string;
  slug: string;
  description: string | null;
  locale: string;
  translation_group: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    tags: TagsTable;
  }
}

export type TagRow = Selectable<TagsTable>;

export function findTag(db: Executor, siteId: string, id: number) {
  return db.selectFrom('tags').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

export async function listTags(db: Executor, dialect: DialectName, siteId: string, query: ListQuery & CommonFilterValues) {
  const base = applyCommonFilters(db.selectFrom('tags').selectAll().where('site_id', '=', siteId), dialect, query, ['name', 'slug', 'description']);
  const column = (query.sortBy ?? 'created_at') as 'created_at' | 'updated_at' | 'name' | 'slug';
  const order = query.sortOrder ?? (query.sortBy ? 'asc' : 'desc');
  return paginate(base, query, (qb) => qb.orderBy(column, order).orderBy('id', order));
}

/** Whether `name` or `slug` is already used in the locale (by another tag than `exceptId`). */
export async function findClash(db: Executor, siteId: string, locale: string, name: string | undefined, slug: string | undefined, exceptId?: number) {
  let q = db
    .selectFrom('tags')
    .select(['id', 'name', 'slug'])
    .where('site_id', '=', siteId)
    .where('locale', '=', locale)
    .where((eb) => eb.or([...(name ? [eb('name', '=', name)] : []), ...(slug ? [eb('slug', '=', slug)] : [])]));
  if (exceptId) q = q.where('id', '!=', exceptId);
  return q.execute();
}

export async function insertTag(db: Executor, row: Insertable<TagsTable>): Promise<number> {
  const { id } = await db.insertInto('tags').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export function updateTag(db: Executor, siteId: string, id: number, patch: Updateable<TagsTable>) {
  return db.updateTable('tags').set(patch).where('site_id', '=', siteId).where('id', '=', id).execute();
}

export async function deleteTag(db: Executor, siteId: string, id: number): Promise<boolean> {
  const res = await db.deleteFrom('tags').where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
