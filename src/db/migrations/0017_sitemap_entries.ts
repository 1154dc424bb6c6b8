import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/** Custom sitemap entries (spec "Sitemap entry (custom)", decisions S1, S7): UUID ids, one URL once per site. */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await db.schema
    .createTable('sitemap_entries')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('url', 'text', (col) => col.notNull())
    // SHA-256 of the URL: a 2,048-character URL may not fit a PostgreSQL btree entry.
    .addColumn('url_hash', 'text', (col) => col.notNull())
    .addColumn('is_external', c.bool, c.boolDefault(false))
    .addColumn('priority', c.real, (col) => col.notNull().defaultTo(0.5))
    .addColumn('changefreq', 'text', (col) => col.notNull().defaultTo('weekly'))
    .addColumn('last_modified', c.timestamp)
    .addColumn('title', 'text')
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('sitemap_entries_site_url_uq').on('sitemap_entries').columns(['site_id', 'url_hash']).unique().execute();
  await db.schema.createIndex('sitemap_entries_site_created_idx').on('sitemap_entries').columns(['site_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sitemap_entries').execute();
}
