import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * Site blocks (spec "Site blocks", decisions B1, B2, G10, G17) with their revisions, each site's
 * site-block settings (staged publishing), and one revisions engine (kit/revisions.ts) for
 * contents and site blocks: content revisions' `changed_fields` becomes the shared `changes`.
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('site_blocks'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('slug', 'text', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('draft'))
    .addColumn('path', 'text')
    .addColumn('locale', 'text', (col) => col.notNull())
    .addColumn('translation_group', 'text', (col) => col.notNull())
    .addColumn('schema', c.json, c.jsonDefault([]))
    .addColumn('data', c.json, c.jsonDefault({}))
    // With staged publishing, what delivery reads serve of a published block: { schema, data } as
    // last published. Null when edits are live (the default), or before the first staged edit.
    .addColumn('published_snapshot', c.json)
    .addColumn('has_unpublished_changes', c.bool, c.boolDefault(false))
    .addColumn('published_at', c.timestamp)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('site_blocks_site_locale_slug_uq').on('site_blocks').columns(['site_id', 'locale', 'slug']).unique().execute();
  // Several global blocks have no path: NULLs never clash in a unique index, on either database.
  await db.schema.createIndex('site_blocks_site_locale_path_uq').on('site_blocks').columns(['site_id', 'locale', 'path']).unique().execute();
  await db.schema.createIndex('site_blocks_site_created_idx').on('site_blocks').columns(['site_id', 'created_at']).execute();
  await db.schema.createIndex('site_blocks_site_group_idx').on('site_blocks').columns(['site_id', 'translation_group']).execute();

  await c
    .serialId(db.schema.createTable('site_block_revisions'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('site_block_id', 'integer', (col) => col.notNull().references('site_blocks.id').onDelete('cascade'))
    .addColumn('author_id', 'text', (col) => col.references('users.id').onDelete('set null'))
    .addColumn('action', 'text', (col) => col.notNull())
    .addColumn('changes', c.json, (col) => col.notNull())
    .addColumn('snapshot', c.json, (col) => col.notNull())
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('site_block_revisions_site_block_idx').on('site_block_revisions').columns(['site_id', 'site_block_id', 'id']).execute();

  await db.schema
    .createTable('site_block_settings')
    .addColumn('site_id', 'text', (col) => col.primaryKey().references('sites.id').onDelete('cascade'))
    .addColumn('staged_publishing', c.bool, c.boolDefault(false))
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();

  await db.schema.alterTable('content_revisions').renameColumn('changed_fields', 'changes').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('content_revisions').renameColumn('changes', 'changed_fields').execute();
  await db.schema.dropTable('site_block_settings').execute();
  await db.schema.dropTable('site_block_revisions').execute();
  await db.schema.dropTable('site_blocks').execute();
}
