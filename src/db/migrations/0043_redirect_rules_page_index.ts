import type { Kysely } from 'kysely';

/**
 * A site's active redirect rules in id order (decisions HN8): `loadSiteRules` reads them a page
 * of 250 at a time, keyset by id (`site_id = ? and is_active = ? and id > ? order by id`). With
 * only the `(site_id, source_hash)` and `(site_id, created_at)` indexes, every page read all of
 * the site's rules and sorted them: 10-30 ms a statement at 36,000 rules on SQLite, each one
 * block of the event loop, 144 of them per import. Through this index a page reads its 250 rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('redirects_site_active_id_idx').on('redirects').columns(['site_id', 'is_active', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('redirects_site_active_id_idx').execute();
}
