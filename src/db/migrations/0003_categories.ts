import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/** Categories (issue 3): hierarchical, translatable, optionally structured with a field schema. */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('categories'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('slug', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('image', 'text')
    // Children are re-parented by the service before a delete; SET NULL is the safety net.
    .addColumn('parent_id', 'integer', (col) => col.references('categories.id').onDelete('set null'))
    .addColumn('locale', 'text', (col) => col.notNull())
    .addColumn('translation_group', 'text', (col) => col.notNull())
    .addColumn('sitemap_priority', c.real)
    .addColumn('sitemap_changefreq', 'text')
    .addColumn('content_mode', 'text', (col) => col.notNull().defaultTo('standard'))
    .addColumn('schema', c.json)
    .addColumn('schema_source', 'text', (col) => col.notNull().defaultTo('own'))
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('categories_site_locale_slug_uq').on('categories').columns(['site_id', 'locale', 'slug']).unique().execute();
  await db.schema.createIndex('categories_site_parent_idx').on('categories').columns(['site_id', 'parent_id']).execute();
  await db.schema.createIndex('categories_site_created_idx').on('categories').columns(['site_id', 'created_at']).execute();
  await db.schema.createIndex('categories_site_group_idx').on('categories').columns(['site_id', 'translation_group']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('categories').execute();
}
