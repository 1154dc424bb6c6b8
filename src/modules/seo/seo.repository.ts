import type { Insertable, Updateable } from 'kysely';
import type { AutoId, Bool, Executor, Timestamp } from '../../db/types.js';

export interface SeoSettingsTable {
  id: AutoId;
  site_id: string;
  robots_rules: string;
  robots_sitemap_link: Bool;
  ai_crawlers: string;
  default_priority: number;
  default_changefreq: string;
  include_contents_in_sitemap: Bool;
  content_path_prefixes: string;
  content_type_priorities: string;
  blog_url_mode: string;
  blog_prefix: string | null;
  index_now_key: string | null;
  index_now_enabled: Bool;
  index_now_last_verified_at: Timestamp | null;
  search_indexing_enabled: Bool;
  llms_txt_enabled: Bool;
  llms_site_description: string | null;
  sitemap_index_enabled: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    seo_settings: SeoSettingsTable;
  }
}

export function findSettings(db: Executor, siteId: string) {
  return db.selectFrom('seo_settings').selectAll().where('site_id', '=', siteId).executeTakeFirst();
}

/** Writes the defaults for a site that has none yet (a second writer's row wins; nothing changes). */
export function insertDefaults(db: Executor, row: Insertable<SeoSettingsTable>) {
  return db
    .insertInto('seo_settings')
    .values(row)
    .onConflict((oc) => oc.column('site_id').doNothing())
    .execute();
}

export function updateSettings(db: Executor, siteId: string, patch: Updateable<SeoSettingsTable>) {
  return db.updateTable('seo_settings').set(patch).where('site_id', '=', siteId).execute();
}

/** What public URLs are built from (decisions G18): the site's domain and locales, and its SEO settings. */
export function urlContext(db: Executor, siteId: string) {
  return db
    .selectFrom('sites')
    .leftJoin('seo_settings', 'seo_settings.site_id', 'sites.id')
    .select([
      'sites.domain',
      'sites.default_locale',
      'sites.hide_default_locale',
      'seo_settings.blog_url_mode',
      'seo_settings.blog_prefix',
      'seo_settings.content_path_prefixes',
      'seo_settings.id as settings_id',
    ])
    .where('sites.id', '=', siteId)
    .executeTakeFirst();
}

/** A category's slug and its parents' up to the root, root first (at most 10 levels). */
export async function categoryPath(db: Executor, siteId: string, categoryId: number): Promise<string[]> {
  const out: string[] = [];
  let id: number | null = categoryId;
  for (let depth = 0; id !== null && depth < 10; depth++) {
    const row: { slug: string; parent_id: number | null } | undefined = await db
      .selectFrom('categories')
      .select(['slug', 'parent_id'])
      .where('site_id', '=', siteId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) break;
    out.unshift(row.slug);
    id = row.parent_id === null ? null : Number(row.parent_id);
  }
  return out;
}
