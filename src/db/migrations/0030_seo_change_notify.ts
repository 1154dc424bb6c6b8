import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * PostgreSQL: changes to what the SEO outputs are built from (sitemap.xml, robots.txt, llms.txt)
 * are announced on `cairn_site_content` like the delivery tables of migration 0024, so every
 * instance moves the site's generation and builds its outputs again (decisions S17). The
 * function `cairn_notify_site_content` is 0024's. SQLite needs nothing (PRAGMA data_version).
 */
const SEO_TABLES = ['seo_settings', 'sitemap_entries', 'sitemap_rules', 'sitemap_sources'];

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const table of SEO_TABLES) {
    await sql
      .raw(`create trigger ${table}_notify_site_content after insert or update or delete on ${table} for each row execute function cairn_notify_site_content()`)
      .execute(db);
  }
}
