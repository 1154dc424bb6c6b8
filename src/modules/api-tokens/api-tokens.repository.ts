import type { Executor } from '../../db/types.js';

export function findTokenById(db: Executor, id: string) {
  return db
    .selectFrom('api_tokens')
    .select(['id', 'site_id', 'user_id', 'kind', 'secret_hash', 'scopes', 'expires_at', 'revoked_at', 'last_used_at'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export function insertToken(
  db: Executor,
  row: {
    id: string;
    site_id: string;
    user_id: string;
    name: string;
    kind: 'management' | 'delivery';
    secret_hash: string;
    scopes: string;
    expires_at: string | null;
    created_at: string;
  },
) {
  return db
    .insertInto('api_tokens')
    .values({ ...row, last_used_at: null, revoked_at: null })
    .execute();
}

export function listTokens(db: Executor, siteId: string) {
  return db
    .selectFrom('api_tokens')
    .select(['id', 'site_id', 'user_id', 'name', 'kind', 'scopes', 'last_used_at', 'expires_at', 'revoked_at', 'created_at'])
    .where('site_id', '=', siteId)
    .orderBy('created_at', 'asc')
    .execute();
}

export async function revokeToken(db: Executor, id: string, at: string): Promise<boolean> {
  const res = await db.updateTable('api_tokens').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export function touchToken(db: Executor, id: string, at: string) {
  return db.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
}
