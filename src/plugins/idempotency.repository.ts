import type { Generated } from 'kysely';
import type { Executor } from '../db/types.js';

/** A stored answer to a create (migration 0034, decisions HR4). */
export interface IdempotencyKeysTable {
  id: Generated<number>;
  site_id: string;
  token_id: string;
  key: string;
  request_hash: string;
  status_code: number;
  content_type: string | null;
  body: string;
  created_at: string;
}

declare module '../db/types.js' {
  interface DB {
    idempotency_keys: IdempotencyKeysTable;
  }
}

export type StoredAnswer = Pick<IdempotencyKeysTable, 'request_hash' | 'status_code' | 'content_type' | 'body'>;

/** The answer stored under a token's key on the site since `since`, if any. */
export function findAnswer(db: Executor, siteId: string, tokenId: string, key: string, since: string): Promise<StoredAnswer | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'status_code', 'content_type', 'body'])
    .where('site_id', '=', siteId)
    .where('token_id', '=', tokenId)
    .where('key', '=', key)
    .where('created_at', '>=', since)
    .executeTakeFirst();
}

/** Stores an answer; an expired row under the same key (not swept yet) makes room first. */
export async function storeAnswer(db: Executor, row: Omit<IdempotencyKeysTable, 'id'>, since: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('site_id', '=', row.site_id)
    .where('token_id', '=', row.token_id)
    .where('key', '=', row.key)
    .where('created_at', '<', since)
    .execute();
  await db.insertInto('idempotency_keys').values(row).execute();
}

/** Deletes up to `limit` keys stored before `cutoff` (the sweep); returns how many. */
export async function deleteExpiredKeys(db: Executor, cutoff: string, limit: number): Promise<number> {
  const oldest = db.selectFrom('idempotency_keys').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(limit);
  const result = await db.deleteFrom('idempotency_keys').where('id', 'in', oldest).executeTakeFirst();
  return Number(result.numDeletedRows);
}
