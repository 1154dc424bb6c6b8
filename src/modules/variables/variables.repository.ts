import type { Insertable, Selectable, Updateable } from 'kysely';
import type { AutoId, Executor, Timestamp } from '../../db/types.js';
import type { DialectName } from '../../db/connect.js';
import { applyCommonFilters, type CommonFilterValues } from '../../shared/list-filters.js';
import { paginate, type ListQuery } from '../../shared/pagination.js';
import type { VariableType } from './variables.schemas.js';

export interface VariablesTable {
  id: AutoId;
  site_id: string;
  key: string;
  label: string;
  value: string;
  type: VariableType;
  description: string | null;
  locale: string;
  translation_group: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    variables: VariablesTable;
  }
}

export type VariableRow = Selectable<VariablesTable>;

export interface VariableFilterValues extends Omit<CommonFilterValues, 'slug' | 'slugs'> {
  type?: VariableType;
  key?: string;
  keys?: string[];
}

export function findVariable(db: Executor, siteId: string, id: number) {
  return db.selectFrom('variables').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

export async function listVariables(db: Executor, dialect: DialectName, siteId: string, query: ListQuery & VariableFilterValues) {
  // Only the known filters reach applyCommonFilters: an unexposed `?slug=` must not become SQL on a table without slugs.
  const common: CommonFilterValues = {
    search: query.search,
    ids: query.ids,
    excludeIds: query.excludeIds,
    locale: query.locale,
    translationGroup: query.translationGroup,
    dateFrom: query.dateFrom,
    dateTo: query.dateTo,
  };
  let base = applyCommonFilters(db.selectFrom('variables').selectAll().where('site_id', '=', siteId), dialect, common, [
    'key',
    'label',
    'value',
    'description',
  ]);
  if (query.type) base = base.where('type', '=', query.type);
  if (query.key) base = base.where('key', '=', query.key);
  if (query.keys?.length) base = base.where('key', 'in', query.keys);
  const column = (query.sortBy ?? 'created_at') as 'created_at' | 'updated_at' | 'key' | 'label';
  const order = query.sortOrder ?? (query.sortBy ? 'asc' : 'desc');
  return paginate(base, query, (qb) => qb.orderBy(column, order).orderBy('id', order));
}

/** Whether `key` is already used in the locale (by another variable than `exceptId`). */
export async function keyTaken(db: Executor, siteId: string, locale: string, key: string, exceptId?: number): Promise<boolean> {
  let q = db.selectFrom('variables').select('id').where('site_id', '=', siteId).where('locale', '=', locale).where('key', '=', key);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return (await q.limit(1).executeTakeFirst()) !== undefined;
}

export async function insertVariable(db: Executor, row: Insertable<VariablesTable>): Promise<number> {
  const { id } = await db.insertInto('variables').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export function updateVariable(db: Executor, siteId: string, id: number, patch: Updateable<VariablesTable>) {
  return db.updateTable('variables').set(patch).where('site_id', '=', siteId).where('id', '=', id).execute();
}

export async function deleteVariable(db: Executor, siteId: string, id: number): Promise<boolean> {
  const res = await db.deleteFrom('variables').where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
