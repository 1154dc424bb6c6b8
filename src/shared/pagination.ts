import { Type, type TSchema } from 'typebox';
import type { SelectQueryBuilder } from 'kysely';
import { DateFilter } from './schemas.js';

export const DEFAULT_PAGE_SIZE = 15;
export const MAX_PAGE_SIZE = 100;

/** Page and limit alone, for lists without sorting or filters (revisions). */
export const PageQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
  limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: `Page size, 1-${MAX_PAGE_SIZE}` }),
});

export interface ListQuery {
  page: number;
  limit: number;
  sortBy?: string;
  sortOrder?: 'asc' | 'desc';
  dateFrom?: string;
  dateTo?: string;
}

/**
 * The shared list query (decisions G5, G6): page, limit (1-100, default 15; out of range is a
 * 422, never clamped), sortBy from the given fields (unknown is a 422), sortOrder, dateFrom and
 * dateTo on the creation date. `extra` adds a list's own filters.
 */
export function listQuerySchema<P extends Record<string, TSchema>>(
  sortFields: readonly string[],
  extra: P = {} as P,
  options: { defaultLimit?: number; defaultSort?: string } = {},
) {
  return Type.Object({
    page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
    limit: Type.Integer({
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      default: options.defaultLimit ?? DEFAULT_PAGE_SIZE,
      description: `Page size, 1-${MAX_PAGE_SIZE}`,
    }),
    sortBy: Type.Optional(sortFieldSchema(sortFields, `Sort field${options.defaultSort ? ` (default ${options.defaultSort})` : ''}`)),
    sortOrder: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Sort order' })),
    dateFrom: Type.Optional({ ...DateFilter, description: 'Created at or after (ISO 8601)' }),
    dateTo: Type.Optional({ ...DateFilter, description: 'Created at or before (ISO 8601; a bare date includes that whole day)' }),
    ...extra,
  });
}

/**
 * A bare date in `dateTo` means the end of that day. Idempotent; a value that is not a string
 * (a prepared query's parameter marker, db/prepared.ts) passes through: the caller bound it.
 */
export function dateBound(value: string, end: boolean): string {
  if (typeof value !== 'string') return value;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T${end ? '23:59:59.999' : '00:00:00.000'}Z`;
  const d = new Date(value.replace(' ', 'T'));
  return Number.isNaN(d.getTime()) ? value : d.toISOString();
}

export interface Page<T> {
  data: T[];
  meta: { total: number; perPage: number; currentPage: number; lastPage: number };
}

export function pageMeta(total: number, page: number, limit: number): Page<never>['meta'] {
  return { total, perPage: limit, currentPage: page, lastPage: Math.max(1, Math.ceil(total / limit)) };
}

/**
 * Runs a filtered query as one page: the count and the rows, both in SQL. `base` carries the
 * filters; `ordered` applies the order to it; the count drops the order and the selection.
 */
export async function paginate<DB, TB extends keyof DB, O, R>(
  base: SelectQueryBuilder<DB, TB, O>,
  query: { page: number; limit: number },
  ordered: (qb: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, R>,
): Promise<{ rows: R[]; total: number }> {
  const countRow: { count?: unknown } | undefined = await (base as SelectQueryBuilder<any, any, any>)
    .clearSelect()
    .clearOrderBy()
    .select((eb: any) => eb.fn.countAll().as('count'))
    .executeTakeFirst();
  const total = Number(countRow?.count ?? 0);
  const offset = (query.page - 1) * query.limit;
  if (total === 0 || offset >= total) return { rows: [], total };
  const rows = await ordered(base).limit(query.limit).offset(offset).execute();
  return { rows, total };
}

/** One literal when a list sorts by one field: an `anyOf` of one schema is no choice (Redocly's lint flags it). */
function sortFieldSchema(fields: readonly string[], description: string) {
  const union = Type.Union(
    fields.map((f) => Type.Literal(f)),
    { description },
  );
  // Typed as the union, so a list that narrows sortBy in `extra` keeps its own type.
  return fields.length === 1 ? (Type.Literal(fields[0]!, { description }) as unknown as typeof union) : union;
}
