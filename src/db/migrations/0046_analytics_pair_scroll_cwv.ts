import { type Kysely, sql } from 'kysely';
import { addPairEventDims } from '../../modules/analytics/analytics.rollup.pairs.js';

/**
 * Scroll depth, Core Web Vitals and forms in the pair rollups (issue 32, decisions AR8, AR9): every
 * clean site-day gets its `form`, `scroll` and `cwv_*` pair rows (and its month their sums) here, so a
 * filtered scroll, vitals or forms report reads rollups at once instead of after the worker rebuilt
 * every day (0040 marked all days dirty, and such a range is scanned meanwhile). Dirty days get them at their rebuild. The rows are the rebuild's own SELECTs (the rollup module's),
 * so they are what a rebuild writes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const days = await db.selectFrom('analytics_days').select(['site_id', 'day']).where('dirty', '=', 0).orderBy('site_id').orderBy('day').execute();
  for (const { site_id, day } of days) await addPairEventDims(db, String(site_id), Number(day), ['form', 'scroll', 'cwv']);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['analytics_pair_daily', 'analytics_pair_monthly'])
    await sql`delete from ${sql.table(table)} where dim in ('form', 'scroll') or substr(dim, 1, 4) = 'cwv_'`.execute(db);
}
