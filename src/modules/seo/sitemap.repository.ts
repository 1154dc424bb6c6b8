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

/** The entry with this URL on the site, if any. */
export function idByUrlHash(db: Executor, siteId: string, hash: string) {
  return db.selectFrom('sitemap_entries').select('id').where('site_id', '=', siteId).where('url_hash', '=', hash).executeTakeFirst();
}

export function insertEntries(db: Executor, rows: Insertable<SitemapEntriesTable>[]) {
  return db.insertInto('sitemap_entries').values(rows).execute();
}

/** Every custom entry of the site, oldest first (sitemaps and exports). */
export function allEntries(db: Executor, siteId: string) {
  return db.selectFrom('sitemap_entries').selectAll().where('site_id', '=', siteId).orderBy('created_at').orderBy('id').execute();
}
