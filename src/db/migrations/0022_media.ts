import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/**
 * The media library (spec "Media file", "Media folder"; decisions M1-M6): folders (UUIDs, names
 * unique within a parent whatever their case, through `parent_key` and `name_key`) and files,
 * whose bytes live in the file storage under `storage_key`.
 */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await db.schema
    .createTable('media_folders')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('name_key', 'text', (col) => col.notNull())
    .addColumn('parent_id', 'text', (col) => col.references('media_folders.id').onDelete('cascade'))
    // The parent's id, or '' at the root: a unique index treats NULLs as distinct, '' is not.
    .addColumn('parent_key', 'text', (col) => col.notNull())
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('media_folders_name_uq').on('media_folders').columns(['site_id', 'parent_key', 'name_key']).unique().execute();

  await db.schema
    .createTable('media_files')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('folder_id', 'text', (col) => col.references('media_folders.id').onDelete('set null'))
    .addColumn('filename', 'text', (col) => col.notNull())
    .addColumn('original_name', 'text', (col) => col.notNull())
    .addColumn('mime_type', 'text', (col) => col.notNull())
    .addColumn('size', 'integer', (col) => col.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('alt', 'text')
    .addColumn('title', 'text')
    .addColumn('description', 'text')
    .addColumn('storage_key', 'text', (col) => col.notNull())
    .addColumn('etag', 'text', (col) => col.notNull())
    // The widths of the stored variants (150, 400, 800, 1200 up to the image's own width).
    .addColumn('variant_widths', c.json, c.jsonDefault([]))
    // Where crops centre (0-1 from the left and the top); null: the middle.
    .addColumn('focal_x', c.real)
    .addColumn('focal_y', c.real)
    .addColumn('deleted_at', c.timestamp)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('media_files_site_created_idx').on('media_files').columns(['site_id', 'created_at']).execute();
  await db.schema.createIndex('media_files_site_folder_idx').on('media_files').columns(['site_id', 'folder_id']).execute();
  await db.schema.createIndex('media_files_site_deleted_idx').on('media_files').columns(['site_id', 'deleted_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('media_files').execute();
  await db.schema.dropTable('media_folders').execute();
}
