import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Single types (issue 3): one-off pages addressed by a permanent slug, unique per site and
 * locale. `data` is free JSON (checked against the optional field `schema`); `body` is the
 * rich-text document and `body_html` its sanitized HTML, rendered on write.
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('single_types'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('slug', 'text', (col) => col.notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('locale', 'text', (col) => col.notNull())
    .addColumn('data', c.json, c.jsonDefault({}))
    .addColumn('schema', c.json)
    .addColumn('body', c.json)
    .addColumn('body_html', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('meta_title', 'text')
    .addColumn('meta_description', 'text')
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('single_types_site_locale_slug_uq').on('single_types').columns(['site_id', 'locale', 'slug']).unique().execute();
  await db.schema.createIndex('single_types_site_created_idx').on('single_types').columns(['site_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('single_types').execute();
}
