import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/** Tags (issue 3): flat, translatable; name and slug unique per site and locale. */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('tags'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('slug', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('locale', 'text', (col) => col.notNull())
    .addColumn('translation_group', 'text', (col) => col.notNull())
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('tags_site_locale_slug_uq').on('tags').columns(['site_id', 'locale', 'slug']).unique().execute();
  await db.schema.createIndex('tags_site_locale_name_uq').on('tags').columns(['site_id', 'locale', 'name']).unique().execute();
  await db.schema.createIndex('tags_site_created_idx').on('tags').columns(['site_id', 'created_at']).execute();
  await db.schema.createIndex('tags_site_group_idx').on('tags').columns(['site_id', 'translation_group']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tags').execute();
}
