import { Type } from 'typebox';
import { common, fieldMap } from '../../kit/fields.js';
import { listQueryFor, tableRepository, type ListSpec } from '../../kit/repository.js';
import { Nullable, Timestamp } from '../../shared/schemas.js';
import './redirects.repository.js';

const bool = (column: string, description: string, insertDefault: boolean) =>
  ({ column, schema: Type.Boolean(), input: Type.Boolean({ description }), read: Boolean, insertDefault }) as const;

export const STATUS_CODES = [301, 302, 307, 308] as const;
const StatusCode = Type.Union(
  STATUS_CODES.map((c) => Type.Literal(c)),
  { description: '301 (default), 302, 307 or 308' },
);

/** Spec "Redirect" (decisions R1-R3): the one field map of the API shape, the bodies, the row and the patch. */
export const redirectFields = fieldMap({
  id: common.id,
  sourcePath: {
    column: 'source_path',
    schema: Type.String(),
    input: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'A path on the site (`/old-page`; query string and trailing slash ignored), or an RE2 pattern when isRegex',
    }),
    create: 'required',
  },
  targetUrl: {
    column: 'target_url',
    schema: Type.String(),
    input: Type.String({ minLength: 1, maxLength: 2048, description: 'An http(s) URL or a path starting with /; `$1`-`$9` insert a regex capture group' }),
    create: 'required',
  },
  statusCode: { column: 'status_code', schema: Type.Integer(), input: StatusCode, read: Number, insertDefault: 301 },
  isRegex: bool('is_regex', 'The source is an RE2 regular expression matched against the path (default false)', false),
  isActive: bool('is_active', 'Active rules redirect (default true)', true),
  preserveQueryString: bool('preserve_query_string', "Append the request's query string to the target (default false)", false),
  note: { column: 'note', schema: Nullable(Type.String()), input: Nullable(Type.String({ maxLength: 500 })) },
  hitCount: { column: 'hit_count', schema: Type.Integer(), read: Number },
  lastHitAt: { column: 'last_hit_at', schema: Nullable(Timestamp) },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

export const redirectsTable = tableRepository('redirects');

export const redirectList = {
  sort: ['created_at', 'updated_at', 'source_path', 'target_url', 'status_code', 'hit_count', 'last_hit_at'],
  search: ['source_path', 'target_url', 'note'],
  common: ['search', 'ids', 'excludeIds'],
  filters: {
    isActive: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) rules' })),
    isRegex: Type.Optional(Type.Boolean({ description: 'Only regex (true) or exact (false) rules' })),
    statusCode: Type.Optional(StatusCode),
  },
  apply: (qb, query: { isActive?: boolean; isRegex?: boolean; statusCode?: number }) => {
    let q = qb;
    if (query.isActive !== undefined) q = q.where('is_active', '=', query.isActive);
    if (query.isRegex !== undefined) q = q.where('is_regex', '=', query.isRegex);
    if (query.statusCode !== undefined) q = q.where('status_code', '=', query.statusCode);
    return q;
  },
} satisfies ListSpec<any, any>;

export const RedirectListQuery = listQueryFor(redirectList);
