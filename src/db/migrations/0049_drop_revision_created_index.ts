import type { Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * Content revisions are listed, read and restored by id (`kit/revisions.ts` orders a content's
 * revisions by id), never by their time, so the `(site_id, content_id, created_at)` index of
 * migration 0011 served no query while every create and update wrote an entry in it: a B-tree
 * insert and a page in the write-ahead log of each content write (decisions PF15). The
 * `(site_id, content_id, id)` index of migration 0007 serves the lists.
 */
export async function up(db: Kysely<any>, _dialect: MigrationDialect): Promise<void> {
  await db.schema.dropIndex('content_revisions_site_content_created_idx').ifExists().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('content_revisions_site_content_created_idx').on('content_revisions').columns(['site_id', 'content_id', 'created_at']).execute();
}
