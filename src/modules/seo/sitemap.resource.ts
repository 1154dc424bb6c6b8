import { Type } from 'typebox';
import { common, fieldMap } from '../../kit/fields.js';
import { listQueryFor, type ListSpec } from '../../kit/repository.js';
import { HttpUrl, Nullable, Timestamp, UrlOrPath } from '../../shared/schemas.js';
import { Changefreq, Priority } from './seo.resource.js';
import './sitemap.repository.js';

/** Spec "Sitemap entry (custom)" (decisions S1, S7). */
export const entryFields = fieldMap({
  id: { column: 'id', schema: Type.String({ format: 'uuid' }) },
  siteId: { column: 'site_id', schema: Type.String() },
  url: {
    column: 'url',
    schema: Type.String(),
    input: UrlOrPath({ description: 'A path on the site (`/about`) or an absolute http(s) URL' }),
    create: 'required',
  },
  isExternal: {
    column: 'is_external',
    schema: Type.Boolean(),
    input: Type.Boolean({ description: 'The URL is on another host (listed as it is; default false)' }),
    read: Boolean,
    insertDefault: false,
  },
  priority: { column: 'priority', schema: Type.Number(), input: Priority, read: Number, insertDefault: 0.5 },
  changefreq: { column: 'changefreq', schema: Type.String(), input: Changefreq, insertDefault: 'weekly' },
  lastModified: {
    column: 'last_modified',
    schema: Nullable(Timestamp),
    input: Nullable(Type.String({ format: 'date-time' })),
    write: (v: string | null) => (v === null ? null : new Date(v).toISOString()),
  },
  title: { column: 'title', schema: Nullable(Type.String()), input: Nullable(Type.String({ maxLength: 255 })) },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

export const entryList = {
  sort: ['created_at', 'updated_at', 'url', 'priority', 'last_modified'],
  search: ['url', 'title'],
  common: ['search'],
  filters: { isExternal: Type.Optional(Type.Boolean()) },
  apply: (qb, query: { isExternal?: boolean }) => (query.isExternal === undefined ? qb : qb.where('is_external', '=', query.isExternal)),
} satisfies ListSpec<any, any>;

/** Sitemap entries are listed 50 to a page by default (spec). */
export const EntryListQuery = (() => {
  const q = listQueryFor(entryList);
  return { ...q, properties: { ...q.properties, limit: { ...q.properties.limit, default: 50 } } } as typeof q;
})();

export const RULE_SOURCE_TYPES = ['content_type', 'category', 'tag', 'path_pattern'] as const;

/** Spec "Sitemap rule", the input shape plus id, isActive and timestamps (decisions S1, S10). */
export const ruleFields = fieldMap({
  id: common.id,
  sourceType: {
    column: 'source_type',
    schema: Type.String(),
    input: Type.Union(
      RULE_SOURCE_TYPES.map((t) => Type.Literal(t)),
      { description: 'What the rule matches: a content type, a category slug, a tag slug, or a path pattern (`*` any characters, `?` one)' },
    ),
    create: 'required',
  },
  sourceValue: { column: 'source_value', schema: Type.String(), input: Type.String({ minLength: 1, maxLength: 255 }), create: 'required' },
  priority: { column: 'priority', schema: Type.Number(), input: Priority, read: Number, create: 'required' },
  changefreq: { column: 'changefreq', schema: Type.String(), input: Changefreq, create: 'required' },
  ruleOrder: {
    column: 'rule_order',
    schema: Type.Integer(),
    input: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Rules are tried in this order, lowest first (then by id); the first match wins' }),
    read: Number,
    insertDefault: 0,
  },
  isActive: { column: 'is_active', schema: Type.Boolean(), input: Type.Boolean(), read: Boolean, insertDefault: true },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

/** Sitemap sources: other sitemaps the sitemap index lists (decisions S11). */
export const sourceFields = fieldMap({
  id: common.id,
  name: { column: 'name', schema: Type.String(), input: Type.String({ minLength: 1, maxLength: 255 }), create: 'required' },
  url: { column: 'url', schema: Type.String(), input: HttpUrl({ description: 'The absolute URL of another sitemap (or sitemap index)' }), create: 'required' },
  isActive: { column: 'is_active', schema: Type.Boolean(), input: Type.Boolean(), read: Boolean, insertDefault: true },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});
