import type { Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * Lists and details load a page's categories and tags by content id. With only the
 * (site_id, ref, content_id) indexes, SQLite's planner took the site_id prefix and scanned every
 * link of the site (3 ms per query at 20,000 links); these make it a direct lookup.
 */
export async function up(db: Kysely<any>, _dialect: MigrationDialect): Promise<void> {
  await db.schema.createIndex('content_categories_site_content_idx').on('content_categories').columns(['site_id', 'content_id', 'position']).execute();
  await db.schema.createIndex('content_tags_site_content_idx').on('content_tags').columns(['site_id', 'content_id', 'position']).execute();
  await db.schema.createIndex('content_revisions_site_content_created_idx').on('content_revisions').columns(['site_id', 'content_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('content_revisions_site_content_created_idx').execute();
  await db.schema.dropIndex('content_tags_site_content_idx').execute();
  await db.schema.dropIndex('content_categories_site_content_idx').execute();
}
