import type { Insertable } from 'kysely';
import type { Bool, Executor, Timestamp } from '../../db/types.js';

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

declare module '../../db/types.js' {
  interface DB {
    sitemap_entries: SitemapEntriesTable;
  }
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
