import { createHash } from 'node:crypto';
import { Type } from 'typebox';
import type { Executor } from '../../db/types.js';
import { common, fieldMap } from '../../kit/fields.js';
import { listQueryFor, type ListSpec } from '../../kit/repository.js';
import { resource } from '../../kit/resource.js';
import { invalid } from '../../shared/errors.js';
import { HttpUrl, Nullable, Timestamp, UrlOrPath } from '../../shared/schemas.js';
import { Changefreq, Priority } from './seo.resource.js';
import { idByUrlHash } from './sitemap.repository.js';

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

/** Rules and sources are listed whole, in their own order (sitemap.routes.ts): the kit's paged list is not registered. */
const wholeList = { sort: [], search: [], common: [] } satisfies ListSpec<any, any>;

/** A custom entry's URL is unique per site through its hash (URLs may be long). */
export const urlHash = (url: string) => createHash('sha256').update(url).digest('hex');

async function assertUrlFree(db: Executor, siteId: string, url: string, exceptId?: string) {
  const taken = await idByUrlHash(db, siteId, urlHash(url));
  if (taken && taken.id !== exceptId) throw invalid('UNIQUE_VIOLATION', 'url', 'The sitemap already has an entry with this URL.');
}

/** Custom sitemap entries (decisions S1, S7): no single read; create and update answer the bare entry (sitemap.routes.ts). */
export const sitemapEntries = resource({
  table: 'sitemap_entries',
  noun: 'sitemap entry',
  name: 'SitemapEntry',
  plural: 'SitemapEntries',
  tag: 'Sitemap',
  path: '/sitemap/entries',
  scope: 'sitemap',
  id: 'uuid',
  fields: entryFields,
  list: entryList,
  rules: {
    async create(tx, { siteId, input, row }) {
      await assertUrlFree(tx, siteId, input.url);
      row.url_hash = urlHash(input.url);
    },
    async update(tx, { siteId, current, input, patch }) {
      if (input.url === undefined) return;
      await assertUrlFree(tx, siteId, input.url, current.id);
      patch.url_hash = urlHash(input.url);
    },
  },
  docs: {
    list: { summary: 'Custom sitemap entries (50 per page by default)' },
    create: { summary: 'Add a custom URL to the sitemap (answers the bare entry)', description: 'A URL the sitemap already has is a 422 on `url`.' },
    update: { summary: 'Change a custom entry (partial; answers the bare entry)' },
    delete: { summary: 'Remove a custom entry' },
  },
});

function checkRule(input: Record<string, unknown>): void {
  if (input.sourceType === 'path_pattern' && typeof input.sourceValue === 'string' && !input.sourceValue.startsWith('/')) {
    throw invalid('VALIDATION_FAILED', 'sourceValue', 'A path pattern starts with / (`*` matches any characters, `?` one).');
  }
}

/** Sitemap rules (decisions S1, S10): no single read. */
export const sitemapRules = resource({
  table: 'sitemap_rules',
  noun: 'sitemap rule',
  name: 'SitemapRule',
  plural: 'SitemapRules',
  tag: 'Sitemap',
  path: '/sitemap/rules',
  scope: 'sitemap',
  fields: ruleFields,
  list: wholeList,
  rules: {
    prepare: (_db, { input }) => checkRule(input),
    update: (_tx, { current, input }) => checkRule({ ...ruleFields.toApi(current), ...input }),
  },
  docs: {
    create: {
      summary: 'Add a rule: which contents get which priority and change frequency',
      description:
        'Active rules are tried by `ruleOrder` (then id) for every published content; the first that matches sets its priority and changefreq. ' +
        '`content_type` matches the type, `category` and `tag` a slug the content is linked to, `path_pattern` its path (`/blog/travel/*`; must start with /). ' +
        'Custom entries keep their own values.',
    },
    update: { summary: 'Change a rule (partial)' },
    delete: { summary: 'Remove a rule' },
  },
});

/** Other sitemaps the sitemap index lists (decisions S11). */
export const sitemapSources = resource({
  table: 'sitemap_sources',
  noun: 'sitemap source',
  name: 'SitemapSource',
  plural: 'SitemapSources',
  tag: 'Sitemap',
  path: '/sitemap/sources',
  scope: 'sitemap',
  fields: sourceFields,
  list: wholeList,
  docs: {
    create: {
      summary: 'Add another sitemap to the index (a shop, a docs site)',
      description: 'While a source is active, sitemap.xml is a sitemap index listing its own parts and every active source.',
    },
    get: { summary: 'A sitemap source' },
    update: { summary: 'Change a sitemap source (partial)' },
    delete: { summary: 'Remove a sitemap source' },
  },
});
