import { Type } from 'typebox';
import { parseJson, toJson } from '../../db/json.js';
import { common, fieldMap } from '../../kit/fields.js';
import { Nullable, Timestamp } from '../../shared/schemas.js';
import './seo.repository.js';

export const CHANGEFREQS = ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'] as const;
export const Changefreq = Type.Union(
  CHANGEFREQS.map((c) => Type.Literal(c)),
  { description: 'always, hourly, daily, weekly, monthly, yearly or never' },
);
export const Priority = Type.Number({ minimum: 0, maximum: 1, description: '0 to 1' });

/** One or more path segments (`blog`, `news/articles`); a leading or trailing slash is dropped on write. */
const PREFIX_PATTERN = '^/?[a-z0-9][a-z0-9._~-]*(?:/[a-z0-9][a-z0-9._~-]*)*/?$';
export const trimSlashes = (v: string | null) => (v === null ? null : v.replace(/^\/+|\/+$/g, ''));

const RobotsGroup = Type.Object({
  userAgent: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\r\\n:#]+$', description: 'A crawler name, or `*`' }),
  rules: Type.Array(
    Type.Object({
      path: Type.String({
        maxLength: 2048,
        pattern: '^(?:/[^\\r\\n#]*)?$',
        description: 'A path starting with / (`*` and `$` as crawlers read them); empty allows or disallows nothing',
      }),
      allow: Type.Boolean(),
    }),
    { maxItems: 200 },
  ),
});

export const AI_CRAWLER_MODES = ['allow', 'block-training', 'block-all'] as const;

const bool = (column: string, description: string) => ({ column, schema: Type.Boolean(), input: Type.Boolean({ description }), read: Boolean }) as const;
const json = <T>(column: string, fallback: T) => ({ read: (v: unknown) => parseJson<T>(v, fallback), write: toJson, column }) as const;

export const DEFAULT_ROBOTS_RULES = [{ userAgent: '*', rules: [{ path: '/', allow: true }] }];

/** Spec "SEO settings" (decisions S2, G18): one row per site. */
export const seoFields = fieldMap({
  id: common.id,
  siteId: { column: 'site_id', schema: Type.String() },
  robotsRules: {
    ...json('robots_rules', DEFAULT_ROBOTS_RULES),
    schema: Type.Array(RobotsGroup),
    input: Type.Array(RobotsGroup, { maxItems: 50, description: 'robots.txt groups, in order' }),
  },
  robotsSitemapLink: bool('robots_sitemap_link', 'Add a `Sitemap:` line to robots.txt (default true)'),
  aiCrawlers: {
    column: 'ai_crawlers',
    schema: Type.String(),
    input: Type.Union(
      AI_CRAWLER_MODES.map((m) => Type.Literal(m)),
      {
        description:
          '`allow` (default): no rules of its own; `block-training`: disallow the crawlers that collect training data (GPTBot, Google-Extended, CCBot, ...) but not AI search and assistants fetching a page for a user; `block-all`: disallow every known AI crawler',
      },
    ),
  },
  defaultPriority: { column: 'default_priority', schema: Type.Number(), input: Priority, read: Number },
  defaultChangefreq: { column: 'default_changefreq', schema: Type.String(), input: Changefreq },
  includeContentsInSitemap: bool('include_contents_in_sitemap', 'Published contents are in the sitemap (default true)'),
  contentPathPrefixes: {
    ...json<Record<string, string>>('content_path_prefixes', {}),
    schema: Type.Record(Type.String(), Type.String()),
    input: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]{0,49}$' }), Type.String({ maxLength: 100, pattern: PREFIX_PATTERN }), {
      maxProperties: 20,
      description: 'Path prefix per content type (`{ "post": "news" }`), taking the place of blogPrefix for that type',
    }),
    write: (v: Record<string, string>) => toJson(Object.fromEntries(Object.entries(v).map(([k, p]) => [k, trimSlashes(p)]))),
  },
  contentTypePriorities: {
    ...json<Record<string, number>>('content_type_priorities', {}),
    schema: Type.Record(Type.String(), Type.Number()),
    input: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]{0,49}$' }), Priority, { maxProperties: 20, description: 'Sitemap priority per content type' }),
  },
  blogUrlMode: {
    column: 'blog_url_mode',
    schema: Type.String(),
    input: Type.Union([Type.Literal('flat'), Type.Literal('nested')], {
      description: '`flat`: /{blogPrefix}/{slug}; `nested`: /{blogPrefix}/{category path}/{slug} (the first category of the content, with its parents)',
    }),
  },
  blogPrefix: {
    column: 'blog_prefix',
    schema: Nullable(Type.String()),
    input: Nullable(Type.String({ maxLength: 100, pattern: PREFIX_PATTERN, description: 'Path segment(s) before a post, e.g. `blog`; null for none' })),
    write: trimSlashes,
  },
  indexNowKey: {
    column: 'index_now_key',
    schema: Nullable(Type.String()),
    input: Nullable(Type.String({ minLength: 8, maxLength: 64, pattern: '^[A-Za-z0-9-]+$', description: '8-64 letters, digits or hyphens' })),
  },
  indexNowEnabled: bool('index_now_enabled', 'Submit published URLs to IndexNow (needs indexNowKey)'),
  indexNowLastVerifiedAt: { column: 'index_now_last_verified_at', schema: Nullable(Timestamp) },
  searchIndexingEnabled: bool('search_indexing_enabled', 'Submit URLs to a connected search console'),
  llmsTxtEnabled: bool('llms_txt_enabled', 'Serve llms.txt, llms-full.txt and markdown (default false: 404)'),
  llmsSiteDescription: {
    column: 'llms_site_description',
    schema: Nullable(Type.String()),
    input: Nullable(Type.String({ maxLength: 2000, description: 'The `>` summary of llms.txt' })),
  },
  sitemapIndexEnabled: bool('sitemap_index_enabled', 'Serve sitemap.xml as a sitemap index even under 50,000 URLs'),
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

/** The stored defaults of a site that has not changed its SEO settings. */
export const SEO_DEFAULTS = {
  robots_rules: toJson(DEFAULT_ROBOTS_RULES),
  robots_sitemap_link: true,
  ai_crawlers: 'allow',
  default_priority: 0.5,
  default_changefreq: 'weekly',
  include_contents_in_sitemap: true,
  content_path_prefixes: toJson({}),
  content_type_priorities: toJson({}),
  blog_url_mode: 'flat',
  blog_prefix: 'blog',
  index_now_key: null,
  index_now_enabled: false,
  search_indexing_enabled: false,
  llms_txt_enabled: false,
  llms_site_description: null,
  sitemap_index_enabled: false,
};
