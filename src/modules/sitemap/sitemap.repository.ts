import type { Insertable } from 'kysely';
import type { AutoId, Bool, Executor, Timestamp } from '../../db/types.js';

export interface SitemapEntriesTable {
  id: string;
  site_id: string;
  url: string;
  url_hash: string;
  is_external: Bool;
  priority: number;
  changefreq: string;
  last_modified: Timestamp | null;
  title: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SitemapRulesTable {
  id: AutoId;
  site_id: string;
  source_type: string;
  source_value: string;
  priority: number;
  changefreq: string;
  rule_order: number;
  is_active: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SitemapSourcesTable {
  id: AutoId;
  site_id: string;
  name: string;
  url: string;
  is_active: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    sitemap_entries: SitemapEntriesTable;
    sitemap_rules: SitemapRulesTable;
    sitemap_sources: SitemapSourcesTable;
  }
}

/** The site's rules in the order they are tried (decisions S10). */
export function orderedRules(db: Executor, siteId: string, activeOnly: boolean) {
  let q = db.selectFrom('sitemap_rules').selectAll().where('site_id', '=', siteId);
  if (activeOnly) q = q.where('is_active', '=', true);
  return q.orderBy('rule_order').orderBy('id').execute();
}

export function allSources(db: Executor, siteId: string, activeOnly: boolean) {
  let q = db.selectFrom('sitemap_sources').selectAll().where('site_id', '=', siteId);
  if (activeOnly) q = q.where('is_active', '=', true);
  return q.orderBy('id').execute();
}

/** Category and tag slugs of the site's published contents (for rules by category or tag). */
export async function publishedLinkSlugs(db: Executor, siteId: string, kind: 'category' | 'tag') {
  const [link, table, ref] =
    kind === 'category' ? (['content_categories', 'categories', 'category_id'] as const) : (['content_tags', 'tags', 'tag_id'] as const);
  return db
    .selectFrom(`${link} as l` as 'content_categories as l')
    .innerJoin(`${table} as t` as 'categories as t', 't.id', `l.${ref}` as 'l.category_id')
    .innerJoin('contents as c', 'c.id', 'l.content_id')
    .select(['l.content_id', 't.slug'])
    .where('l.site_id', '=', siteId)
    .where('c.site_id', '=', siteId)
    .where('c.status', '=', 'published')
    .execute();
}

export function insertEntries(db: Executor, rows: Insertable<SitemapEntriesTable>[]) {
  return db.insertInto('sitemap_entries').values(rows).execute();
}

/** Every custom entry of the site, oldest first (sitemaps and exports). */
export function allEntries(db: Executor, siteId: string) {
  return db.selectFrom('sitemap_entries').selectAll().where('site_id', '=', siteId).orderBy('created_at').orderBy('id').execute();
}

/** What a sitemap lists of a site's published contents, by id, `limit` after `afterId`, with each one's first category. */
export function publishedContents(db: Executor, siteId: string, afterId: number, limit: number) {
  return db
    .selectFrom('contents')
    .select((eb) => [
      'contents.id',
      'contents.slug',
      'contents.locale',
      'contents.type',
      'contents.translation_group',
      'contents.updated_at',
      eb
        .selectFrom('content_categories')
        .select('content_categories.category_id')
        .whereRef('content_categories.content_id', '=', 'contents.id')
        .where('content_categories.site_id', '=', siteId)
        .orderBy('content_categories.position')
        .limit(1)
        .as('first_category_id'),
    ])
    .where('contents.site_id', '=', siteId)
    .where('contents.status', '=', 'published')
    .where('contents.id', '>', afterId)
    .orderBy('contents.id')
    .limit(limit)
    .execute();
}

/** The site's categories (nested URLs walk their parents in memory). */
export function categoryTree(db: Executor, siteId: string) {
  return db.selectFrom('categories').select(['id', 'slug', 'parent_id']).where('site_id', '=', siteId).execute();
}
