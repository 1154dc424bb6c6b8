import { type RawBuilder, sql } from 'kysely';
import { dialectOf } from '../db/dialect.js';
import type { Executor } from '../db/types.js';

/**
 * Claims a batch of rows for one worker in one statement:
 * `UPDATE <table> SET <set> WHERE id IN (<candidates> <lock>) RETURNING *`. The candidates select
 * picks, orders and limits the ids; on PostgreSQL the lock clause skips rows another instance is
 * claiming at the same moment (`FOR UPDATE SKIP LOCKED`, of `lockAlias` when the select joins),
 * on SQLite the single writer makes the statement atomic. So no two workers ever claim the same
 * row. The jobs queue, the webhook outbox and the webhook deliveries all claim through this.
 */
export async function claimRows<R>(
  db: Executor,
  claim: { table: string; set: RawBuilder<unknown>; candidates: RawBuilder<unknown>; lockAlias?: string },
): Promise<R[]> {
  const lock = dialectOf(db).skipLocked(claim.lockAlias);
  const { rows } = await sql<R>`
    update ${sql.table(claim.table)} set ${claim.set}
    where id in (${claim.candidates} ${lock})
    returning *`.execute(db);
  return rows;
}
