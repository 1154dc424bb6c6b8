import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * SEO settings (spec "SEO settings", decisions S2, G18): one row per site, written on first use;
 * a site without a row reads the defaults (modules/seo/seo.service.ts).
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('seo_settings'))
    .addColumn('site_id', 'text', (col) => col.notNull().unique().references('sites.id').onDelete('cascade'))
    .addColumn('robots_rules', c.json, (col) => col.notNull())
    .addColumn('robots_sitemap_link', c.bool, c.boolDefault(true))
    .addColumn('ai_crawlers', 'text', (col) => col.notNull().defaultTo('allow'))
    .addColumn('default_priority', c.real, (col) => col.notNull().defaultTo(0.5))
    .addColumn('default_changefreq', 'text', (col) => col.notNull().defaultTo('weekly'))
    .addColumn('include_contents_in_sitemap', c.bool, c.boolDefault(true))
    .addColumn('content_path_prefixes', c.json, (col) => col.notNull())
    .addColumn('content_type_priorities', c.json, (col) => col.notNull())
    .addColumn('blog_url_mode', 'text', (col) => col.notNull().defaultTo('flat'))
    .addColumn('blog_prefix', 'text')
    .addColumn('index_now_key', 'text')
    .addColumn('index_now_enabled', c.bool, c.boolDefault(false))
    .addColumn('index_now_last_verified_at', c.timestamp)
    .addColumn('search_indexing_enabled', c.bool, c.boolDefault(false))
    .addColumn('llms_txt_enabled', c.bool, c.boolDefault(false))
    .addColumn('llms_site_description', 'text')
    .addColumn('sitemap_index_enabled', c.bool, c.boolDefault(false))
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('seo_settings').execute();
}
