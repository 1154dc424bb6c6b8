import type { Kysely } from 'kysely';
import { columns, type MigrationDialect } from './columns.js';

/** Contents (posts), their category and tag links, and revisions (issue 4). */
export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  const c = columns(dialect);
  await c
    .serialId(db.schema.createTable('contents'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('type', 'text', (col) => col.notNull().defaultTo('post'))
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('slug', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('excerpt', 'text')
    .addColumn('locale', 'text', (col) => col.notNull())
    .addColumn('translation_group', 'text', (col) => col.notNull())
    .addColumn('author_id', 'text', (col) => col.references('users.id').onDelete('set null'))
    // The body as ProseMirror JSON, and what is rendered from it on write (decisions C1).
    .addColumn('body', c.json)
    .addColumn('body_html', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('body_text', 'text', (col) => col.notNull().defaultTo(''))
    .addColumn('featured_image_url', 'text')
    .addColumn('featured_image_alt', 'text')
    .addColumn('meta_title', 'text')
    .addColumn('meta_description', 'text')
    .addColumn('meta_keywords', 'text')
    .addColumn('canonical_url', 'text')
    .addColumn('og_image', 'text')
    .addColumn('metadata', c.json)
    .addColumn('custom_data', c.json)
    .addColumn('structured_data', c.json)
    .addColumn('scheduled_at', c.timestamp)
    .addColumn('published_at', c.timestamp)
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .addColumn('updated_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('contents_site_locale_slug_uq').on('contents').columns(['site_id', 'locale', 'slug']).unique().execute();
  await db.schema.createIndex('contents_site_created_idx').on('contents').columns(['site_id', 'created_at']).execute();
  await db.schema.createIndex('contents_site_status_published_idx').on('contents').columns(['site_id', 'status', 'published_at']).execute();
  await db.schema.createIndex('contents_site_updated_idx').on('contents').columns(['site_id', 'updated_at']).execute();
  await db.schema.createIndex('contents_site_group_idx').on('contents').columns(['site_id', 'translation_group']).execute();
  await db.schema.createIndex('contents_site_author_idx').on('contents').columns(['site_id', 'author_id']).execute();

  for (const [table, ref, column] of [
    ['content_categories', 'categories', 'category_id'],
    ['content_tags', 'tags', 'tag_id'],
  ] as const) {
    await db.schema
      .createTable(table)
      .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
      .addColumn('content_id', 'integer', (col) => col.notNull().references('contents.id').onDelete('cascade'))
      .addColumn(column, 'integer', (col) => col.notNull().references(`${ref}.id`).onDelete('cascade'))
      .addColumn('position', 'integer', (col) => col.notNull().defaultTo(0))
      .addPrimaryKeyConstraint(`${table}_pk`, ['content_id', column])
      .execute();
    await db.schema.createIndex(`${table}_site_ref_idx`).on(table).columns(['site_id', column, 'content_id']).execute();
  }

  await c
    .serialId(db.schema.createTable('content_revisions'))
    .addColumn('site_id', 'text', (col) => col.notNull().references('sites.id').onDelete('cascade'))
    .addColumn('content_id', 'integer', (col) => col.notNull().references('contents.id').onDelete('cascade'))
    .addColumn('author_id', 'text', (col) => col.references('users.id').onDelete('set null'))
    .addColumn('action', 'text', (col) => col.notNull())
    .addColumn('changed_fields', c.json, (col) => col.notNull())
    .addColumn('snapshot', c.json, (col) => col.notNull())
    .addColumn('created_at', c.timestamp, (col) => col.notNull())
    .execute();
  await db.schema.createIndex('content_revisions_site_content_idx').on('content_revisions').columns(['site_id', 'content_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['content_revisions', 'content_tags', 'content_categories', 'contents']) await db.schema.dropTable(t).execute();
}
