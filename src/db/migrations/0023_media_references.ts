import { type Kysely, sql } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * Which contents and site blocks use which media files (issue 10, item 7): kept by the writes of
 * contents and site blocks in their transaction, so a file's detail counts its users, and the
 * `unused` filter finds files nobody uses, with one indexed lookup instead of a scan of bodies.
 * A row goes with its file, its content or its site block (foreign keys, cascading).
 */
export async function up(db: Kysely<any>, _dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('media_references')
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('media_id', 'text', (col) => col.notNull().references('media_files.id').onDelete('cascade'))
    .addColumn('content_id', 'integer', (col) => col.references('contents.id').onDelete('cascade'))
    .addColumn('site_block_id', 'integer', (col) => col.references('site_blocks.id').onDelete('cascade'))
    // Where in its source the file is used (`featuredImage`, `body`, `data`): a write replaces only the fields it changed.
    .addColumn('field', 'text', (col) => col.notNull())
    .addCheckConstraint('media_references_one_source', sql`(content_id is null) <> (site_block_id is null)`)
    .execute();
  await db.schema.createIndex('media_references_media_idx').on('media_references').columns(['site_id', 'media_id']).execute();
  await db.schema.createIndex('media_references_content_idx').on('media_references').columns(['content_id', 'field']).execute();
  await db.schema.createIndex('media_references_block_idx').on('media_references').columns(['site_block_id', 'field']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('media_references').execute();
}
