import { Type } from 'typebox';
import type { SelectQueryBuilder } from 'kysely';
import type { SqlDialect } from '../db/dialect.js';
import { dateBound } from './pagination.js';
import { Id, Locale, Uuid } from './schemas.js';

/**
 * The filters most lists share (decisions G6, G7): search, slug, slugs[], ids[], excludeIds[],
 * locale, translationGroup, dateFrom/dateTo. Schemas and SQL side by side so they cannot drift.
 */
export const CommonFilters = {
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive text search' })),
  slug: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  slugs: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 100, description: 'Any of these slugs (`slugs[]=a&slugs[]=b`)' })),
  ids: Type.Optional(Type.Array(Id(), { maxItems: 100, description: 'Any of these ids (`ids[]=1&ids[]=2`)' })),
  excludeIds: Type.Optional(Type.Array(Id(), { maxItems: 100, description: 'None of these ids' })),
  locale: Type.Optional(Locale),
  translationGroup: Type.Optional(Type.String({ format: 'uuid', description: 'Members of this translation group' })),
};

/** `ids[]` and `excludeIds[]` of a list whose ids are UUIDs (media): checked as UUIDs, not decimal ids. */
export const UuidFilters = {
  ids: Type.Optional(Type.Array(Uuid, { maxItems: 100, description: 'Any of these ids (`ids[]=<uuid>&ids[]=<uuid>`)' })),
  excludeIds: Type.Optional(Type.Array(Uuid, { maxItems: 100, description: 'None of these ids' })),
};

export interface CommonFilterValues {
  search?: string;
  slug?: string;
  slugs?: string[];
  ids?: Array<number | string>;
  excludeIds?: Array<number | string>;
  locale?: string;
  translationGroup?: string;
  dateFrom?: string;
  dateTo?: string;
}

export function applyCommonFilters<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  dialect: SqlDialect,
  f: CommonFilterValues,
  searchColumns: readonly string[],
): SelectQueryBuilder<DB, TB, O> {
  const q = f.search ? (qb as SelectQueryBuilder<any, any, O>).where(dialect.containsText(searchColumns, f.search)) : qb;
  return applyRecordFilters(q as SelectQueryBuilder<DB, TB, O>, f);
}

/**
 * The common filters but search, on columns qualified by `table` when given (for queries that
 * join other tables, e.g. contents with their links).
 */
export function applyRecordFilters<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  f: Omit<CommonFilterValues, 'search'>,
  table?: string,
): SelectQueryBuilder<DB, TB, O> {
  const col = (name: string) => (table ? `${table}.${name}` : name);
  let q = qb as SelectQueryBuilder<any, any, O>;
  if (f.slug) q = q.where(col('slug'), '=', f.slug);
  if (f.slugs?.length) q = q.where(col('slug'), 'in', f.slugs);
  if (f.ids?.length) q = q.where(col('id'), 'in', f.ids);
  if (f.excludeIds?.length) q = q.where(col('id'), 'not in', f.excludeIds);
  if (f.locale) q = q.where(col('locale'), '=', f.locale);
  if (f.translationGroup) q = q.where(col('translation_group'), '=', f.translationGroup);
  if (f.dateFrom) q = q.where(col('created_at'), '>=', dateBound(f.dateFrom, false));
  if (f.dateTo) q = q.where(col('created_at'), '<=', dateBound(f.dateTo, true));
  return q as SelectQueryBuilder<DB, TB, O>;
}
