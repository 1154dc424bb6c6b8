import type { Updateable } from 'kysely';
import type { ApiTokensTable, Executor } from '../../db/types.js';
import { dialectOf } from '../../db/dialect.js';
import { paginate } from '../../shared/pagination.js';

/**
 * The authentication lookup (decisions U3): one primary-key statement for the token with its
 * user's activity and role, so effective scopes cost no second query.
 */
export function findTokenForAuth(db: Executor, id: string) {
  return db
    .selectFrom('api_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .select([
      't.id',
      't.site_id',
      't.user_id',
      't.kind',
      't.secret_hash',
      't.scopes',
      't.expires_at',
      't.revoked_at',
      'u.is_active as user_is_active',
      'r.scopes as role_scopes',
      'r.is_system as role_is_system',
    ])
    .where('t.id', '=', id)
    .executeTakeFirst();
}

export function insertToken(
  db: Executor,
  row: {
    id: string;
    site_id: string;
    user_id: string;
    name: string;
    description: string | null;
    kind: 'management' | 'delivery';
    secret_hash: string;
    scopes: string;
    expires_at: string | null;
    created_at: string;
    created_by_token_id: string | null;
  },
) {
  return db
    .insertInto('api_tokens')
    .values({ ...row, updated_at: row.created_at, last_used_at: null, revoked_at: null, regenerated_at: null })
    .execute();
}

/** A token as answers show it: with its user's name and role scopes (for effectiveScopes). */
function tokenViews(db: Executor, siteId: string) {
  return db
    .selectFrom('api_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .select([
      't.id',
      't.site_id',
      't.user_id',
      't.name',
      't.description',
      't.kind',
      't.scopes',
      't.last_used_at',
      't.expires_at',
      't.revoked_at',
      't.created_at',
      't.updated_at',
      'u.full_name as user_name',
      'r.scopes as role_scopes',
      'r.is_system as role_is_system',
    ])
    .where('t.site_id', '=', siteId);
}

export type TokenView = NonNullable<Awaited<ReturnType<typeof findToken>>>;

export function findToken(db: Executor, siteId: string, id: string) {
  return tokenViews(db, siteId).where('t.id', '=', id).executeTakeFirst();
}

export type TokenStatus = 'active' | 'expired' | 'revoked';

export interface TokenListQuery {
  page: number;
  limit: number;
  sortBy?: 'created_at' | 'last_used_at' | 'name' | 'expires_at';
  sortOrder?: 'asc' | 'desc';
  status?: TokenStatus[];
  kind?: 'management' | 'delivery';
  userId?: string;
  search?: string;
  dateFrom?: string;
  dateTo?: string;
}

export function listTokens(db: Executor, siteId: string, query: TokenListQuery, at: string) {
  let base = tokenViews(db, siteId);
  const statuses = query.status ?? ['active', 'expired'];
  base = base.where((eb) =>
    eb.or(
      statuses.map((s) =>
        s === 'revoked'
          ? eb('t.revoked_at', 'is not', null)
          : s === 'expired'
            ? eb.and([eb('t.revoked_at', 'is', null), eb('t.expires_at', '<=', at)])
            : eb.and([eb('t.revoked_at', 'is', null), eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', at)])]),
      ),
    ),
  );
  if (query.kind) base = base.where('t.kind', '=', query.kind);
  if (query.userId) base = base.where('t.user_id', '=', query.userId);
  if (query.search) base = base.where(dialectOf(db).containsText(['t.name'], query.search));
  if (query.dateFrom) base = base.where('t.created_at', '>=', query.dateFrom);
  if (query.dateTo) base = base.where('t.created_at', '<=', query.dateTo);
  const order = query.sortOrder ?? 'desc';
  return paginate(base, query, (qb) => qb.orderBy(`t.${query.sortBy ?? 'created_at'}`, order).orderBy('t.id', order));
}

/** Every token of a site, oldest first (the CLI's list). */
export function allTokens(db: Executor, siteId: string) {
  return tokenViews(db, siteId).orderBy('t.created_at', 'asc').orderBy('t.id').execute();
}

/** The user a token is made for, with their role's scopes (a token never exceeds its user). */
export function findUserWithRole(db: Executor, siteId: string, userId: string) {
  return db
    .selectFrom('users as u')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .select(['u.id', 'u.full_name', 'r.scopes as role_scopes', 'r.is_system as role_is_system'])
    .where('u.site_id', '=', siteId)
    .where('u.id', '=', userId)
    .executeTakeFirst();
}

export async function updateToken(db: Executor, siteId: string, id: string, patch: Updateable<ApiTokensTable>): Promise<boolean> {
  const res = await db.updateTable('api_tokens').set(patch).where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** The CLI revokes by id alone: the operator names the token. */
export async function revokeToken(db: Executor, id: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable('api_tokens')
    .set({ revoked_at: at, updated_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export function findSiteOf(db: Executor, id: string) {
  return db.selectFrom('api_tokens').select(['site_id']).where('id', '=', id).executeTakeFirst();
}

export function touchToken(db: Executor, id: string, at: string) {
  return db.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
}

/** Revoked tokens are kept for the list's `status=revoked` for a while, then purged (retention). */
export async function deleteRevokedTokens(db: Executor, cutoff: string, limit: number): Promise<number> {
  const batch = db.selectFrom('api_tokens').select('id').where('revoked_at', '<', cutoff).limit(limit);
  const res = await db.deleteFrom('api_tokens').where('id', 'in', batch).executeTakeFirst();
  return Number(res.numDeletedRows);
}
