import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/** Sitemap rules (priority and change frequency by content type, category, tag or path pattern) and sources (other sitemaps in the index); decisions S1, S10, S11. */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('sitemap_rules'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('source_type', 'text', (col) => col.notNull())
    .addColumn('source_value', 'text', (col) => col.notNull())
    .addColumn('priority', c.real, (col) => col.notNull())
    .addColumn('changefreq', 'text', (col) => col.notNull())
    .addColumn('rule_order', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('is_active', c.bool, c.boolDefault(true))
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('sitemap_rules_site_order_idx').on('sitemap_rules').columns(['site_id', 'rule_order', 'id']).execute();
  await c
    .serialId(db.schema.createTable('sitemap_sources'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('is_active', c.bool, c.boolDefault(true))
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('sitemap_sources_site_idx').on('sitemap_sources').columns(['site_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sitemap_sources').execute();
  await db.schema.dropTable('sitemap_rules').execute();
}
