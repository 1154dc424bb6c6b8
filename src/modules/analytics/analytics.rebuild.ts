import { setImmediate as nextTurn } from 'node:timers/promises';
import { type RawBuilder, sql } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import type { Executor } from '../../db/types.js';

/**
 * The rebuild of a site-day's rollups (decisions AN7, AN12) as a list of per-table steps, each a
 * list of statements run one at a time inside the rebuild's transaction with a turn of the event
 * loop before each: on SQLite every statement runs synchronously on the event loop, so the
 * rebuild holds other requests for one statement at most, never for the whole day. Writes (the
 * collector's flush) wait for the transaction on the writer's lock without holding the loop;
 * reads go on through the reader connection.
 *
 * Every statement reading sessions names the day index (`indexedBy`, SQLite): with the filter
 * columns' indexes of AR5, `(site_id, column, sample, day)`, the planner read a `GROUP BY column`
 * through that column's index to skip the sort, i.e. every session the site ever had, filtered
 * by day (6.7 s a day over a 10M-event site). Each statement now reads one day's rows.
 *
 * A table of rollups that a report reads beside `analytics_daily` adds its own step to
 * `ROLLUP_STEPS` (analytics.store.ts, beside `dailyRollups`).
 */
export interface RollupStep {
  /** The table the step writes (logs and tests name it). */
  table: string;
  /** Deletes the site-day's rows of the table, then inserts them again. */
  day(db: Executor, siteId: string, day: number): RawBuilder<unknown>[];
  /** Rebuilds the table's month from its days; runs after every step's day statements. */
  month?(db: Executor, siteId: string, month: { month: number; first: number; last: number }): Promise<RawBuilder<unknown>[]>;
}

/** The sessions of a site-day, read through the day index. */
export function sessionsOfDay(db: Executor, alias?: string): RawBuilder<unknown> {
  return sql`analytics_sessions${alias ? sql` ${sql.id(alias)}` : sql``} ${dialectOf(db).indexedBy('analytics_sessions_day_idx')}`;
}

/** Runs every step's statements for a site-day, then its month's, each after a turn of the event loop (inside the caller's transaction). */
export async function rebuildSiteDay(
  trx: Executor,
  siteId: string,
  day: number,
  month: { month: number; first: number; last: number },
  steps: readonly RollupStep[],
): Promise<void> {
  for (const step of steps)
    for (const statement of step.day(trx, siteId, day)) {
      await nextTurn();
      await statement.execute(trx);
    }
  for (const step of steps) {
    if (!step.month) continue;
    await nextTurn();
    for (const statement of await step.month(trx, siteId, month)) {
      await nextTurn();
      await statement.execute(trx);
    }
  }
}
