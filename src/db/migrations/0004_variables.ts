import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/** Variables (issue 3): key/value pairs (text or calendar), translatable; keys unique per site and locale. */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('variables'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('key', 'text', (col) => col.notNull())
    .addColumn('label', 'text', (col) => col.notNull())
    .addColumn('value', 'text', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull().defaultTo('text'))
    .addColumn('description', 'text')
    .addColumn('locale', 'text', (col) => col.notNull())
    .addColumn('translation_group', 'text', (col) => col.notNull())
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('variables_site_locale_key_uq').on('variables').columns(['site_id', 'locale', 'key']).unique().execute();
  await db.schema.createIndex('variables_site_created_idx').on('variables').columns(['site_id', 'created_at']).execute();
  await db.schema.createIndex('variables_site_group_idx').on('variables').columns(['site_id', 'translation_group']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('variables').execute();
}
