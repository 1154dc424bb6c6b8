import { Type } from 'typebox';
import { common, fieldMap } from '../../kit/fields.js';
import { listQueryFor, type ListSpec } from '../../kit/repository.js';
import { Nullable, Timestamp, UrlOrPath } from '../../shared/schemas.js';
import { Changefreq, Priority } from '../seo/seo.resource.js';
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
