import { type Kysely, sql } from 'kysely';

/**
 * The click heatmap's driving index (issue 32, decisions AR7): a page's clicks are read from
 * `(site_id, path, ts)` over click events only (a partial index: clicks are a small share of the
 * events) instead of every session of the range and their events. 3 is the click's type code
 * (frozen here: codes never change).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('analytics_events_clicks_idx')
    .on('analytics_events')
    .columns(['site_id', 'path', 'ts'])
    .where(sql.ref('type'), '=', sql.lit(3))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('analytics_events_clicks_idx').execute();
}
