import { type RawBuilder, sql } from 'kysely';

/**
 * A column as a filter only: `column || ''`, which no index can serve, on both databases
 * (decisions H30). For queries that find their rows by primary key and check the site as well,
 * `where site_id = ? and id in (...)`: without current statistics SQLite's planner prefers an
 * index starting with site_id, and walks every content of the site (2.0 ms instead of 0.3 at
 * 10,000) to find 15 rows. With the site condition unindexable, the primary key is the only plan.
 */
export function filterOnly(column: string): RawBuilder<string> {
  return sql<string>`${sql.ref(column)} || ''`;
}

/**
 * A page size written into the statement instead of bound (decisions PF23), for a prepared
 * query's LIMIT (make `limit` structural: one statement per size, and sizes are capped by the
 * list schemas). PostgreSQL keeps a named statement's generic plan only when its estimated cost
 * is no worse than the custom plans': a LIMIT parameter is estimated as a tenth of the rows, so
 * the list's generic plan never won and every run was planned again (0.6-0.9 ms of a 1 ms list
 * page). With the size known (and no OFFSET on a first page) the generic plan is the custom one.
 */
export function fixedLimit(n: number): RawBuilder<number> {
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`a page size must be a whole number, not ${String(n)}`);
  return sql.lit(n);
}
