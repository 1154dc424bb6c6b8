import type { Insertable, Updateable } from 'kysely';
import type { Executor, UsersTable } from '../../db/types.js';
import { dialectOf } from '../../db/dialect.js';
import { paginate } from '../../shared/pagination.js';

/** A user with their role and token figures (subqueries on the (site_id, user_id) index, not one query per user). */
function userViews(db: Executor, siteId: string) {
  return db
    .selectFrom('users as u')
    .innerJoin('roles as r', 'r.id', 'u.role_id')
    .select([
      'u.id',
      'u.site_id',
      'u.full_name',
      'u.email',
      'u.is_active',
      'u.is_owner',
      'u.created_at',
      'u.updated_at',
      'r.id as role_id',
      'r.slug as role_slug',
      'r.name as role_name',
    ])
    .select((eb) => [
      eb
        .selectFrom('api_tokens as t')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('t.site_id', '=', 'u.site_id')
        .whereRef('t.user_id', '=', 'u.id')
        .where('t.revoked_at', 'is', null)
        .as('token_count'),
      eb
        .selectFrom('api_tokens as t')
        .select((e) => e.fn.max('t.last_used_at').as('m'))
        .whereRef('t.site_id', '=', 'u.site_id')
        .whereRef('t.user_id', '=', 'u.id')
        .as('last_active_at'),
    ])
    .where('u.site_id', '=', siteId);
}

export type UserView = NonNullable<Awaited<ReturnType<typeof findUser>>>;

export function findUser(db: Executor, siteId: string, id: string) {
  return userViews(db, siteId).where('u.id', '=', id).executeTakeFirst();
}

export function findOwner(db: Executor, siteId: string) {
  return userViews(db, siteId).where('u.is_owner', '=', true).executeTakeFirst();
}

export interface UserListQuery {
  page: number;
  limit: number;
  sortBy?: 'created_at' | 'full_name' | 'email';
  sortOrder?: 'asc' | 'desc';
  roleId?: string;
  isActive?: boolean;
  search?: string;
  dateFrom?: string;
  dateTo?: string;
}

export function listUsers(db: Executor, siteId: string, query: UserListQuery) {
  let base = userViews(db, siteId);
  if (query.roleId) base = base.where('u.role_id', '=', query.roleId);
  if (query.isActive !== undefined) base = base.where('u.is_active', '=', query.isActive);
  if (query.search) base = base.where(dialectOf(db).containsText(['u.full_name', 'u.email'], query.search));
  if (query.dateFrom) base = base.where('u.created_at', '>=', query.dateFrom);
  if (query.dateTo) base = base.where('u.created_at', '<=', query.dateTo);
  const order = query.sortOrder ?? 'asc';
  return paginate(base, query, (qb) => qb.orderBy(`u.${query.sortBy ?? 'created_at'}`, order).orderBy('u.id', order));
}

export function emailTaken(db: Executor, siteId: string, email: string, exceptId?: string) {
  return db
    .selectFrom('users')
    .select('id')
    .where('site_id', '=', siteId)
    .where('email', '=', email)
    .$if(!!exceptId, (q) => q.where('id', '!=', exceptId!))
    .executeTakeFirst();
}

export function insertUser(db: Executor, row: Insertable<UsersTable>) {
  return db.insertInto('users').values(row).execute();
}

export function updateUser(db: Executor, siteId: string, id: string, patch: Updateable<UsersTable>) {
  return db.updateTable('users').set(patch).where('site_id', '=', siteId).where('id', '=', id).execute();
}

/** The ids of a user's tokens, so this process forgets them when the user goes. */
export async function tokenIdsOf(db: Executor, siteId: string, userId: string): Promise<string[]> {
  const rows = await db.selectFrom('api_tokens').select('id').where('site_id', '=', siteId).where('user_id', '=', userId).execute();
  return rows.map((r) => r.id);
}

/**
 * A deleted user's contents go to `reassignTo`, or keep no author (decisions U2); their tokens go
 * with them. Revisions of contents and site blocks keep their history (the reference becomes null).
 */
export async function deleteUser(db: Executor, siteId: string, id: string, reassignTo: string | null) {
  if (reassignTo) await db.updateTable('contents').set({ author_id: reassignTo }).where('site_id', '=', siteId).where('author_id', '=', id).execute();
  await db.deleteFrom('api_tokens').where('site_id', '=', siteId).where('user_id', '=', id).execute();
  await db.deleteFrom('users').where('site_id', '=', siteId).where('id', '=', id).execute();
}
