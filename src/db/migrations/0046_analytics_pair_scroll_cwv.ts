import { type Kysely, sql } from 'kysely';

/**
 * Scroll depth, Core Web Vitals and forms in the pair rollups (issue 32, decisions AR8, AR9): the
 * pair rows of days rebuilt before lack `form`, `scroll` and `cwv_*`, so every day is marked dirty
 * (as 0040 did): the worker's rebuild writes them, and until then those days are read live (exact,
 * only slower).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`update analytics_days set dirty = 1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['analytics_pair_daily', 'analytics_pair_monthly'])
    await sql`delete from ${sql.table(table)} where dim in ('form', 'scroll') or substr(dim, 1, 4) = 'cwv_'`.execute(db);
}
