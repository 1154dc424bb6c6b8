import type { Executor } from '../../db/types.js';

/**
 * What a page of users shows beside their rows: their roles' names and their token figures (not
 * revoked tokens, latest use), two queries for the page on the (site_id, user_id) index.
 */
export async function pageFigures(db: Executor, siteId: string, rows: ReadonlyArray<{ id: string; role_id: string }>) {
  if (!rows.length) return { roles: new Map(), tokens: new Map() };
  const roleRows = await db
    .selectFrom('roles')
    .select(['id', 'slug', 'name'])
    .where('site_id', '=', siteId)
    .where('id', 'in', [...new Set(rows.map((r) => r.role_id))])
    .execute();
  const tokenRows = await db
    .selectFrom('api_tokens')
    .select(['user_id', (eb) => eb.fn.count<number>('id').filterWhere('revoked_at', 'is', null).as('n'), (eb) => eb.fn.max('last_used_at').as('last')])
    .where('site_id', '=', siteId)
    .where(
      'user_id',
      'in',
      rows.map((r) => r.id),
    )
    .groupBy('user_id')
    .execute();
  return {
    roles: new Map(roleRows.map((r) => [r.id, r])),
    tokens: new Map(tokenRows.map((t) => [t.user_id, { count: Number(t.n), lastUsedAt: (t.last as string | null) ?? null }])),
  };
}

export function findUser(db: Executor, siteId: string, id: string) {
  return db.selectFrom('users').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

export function findOwner(db: Executor, siteId: string) {
  return db.selectFrom('users').selectAll().where('site_id', '=', siteId).where('is_owner', '=', true).executeTakeFirst();
}

export function insertOwner(db: Executor, row: { id: string; site_id: string; full_name: string; role_id: string; created_at: string }) {
  return db
    .insertInto('users')
    .values({ ...row, email: null, is_active: true, is_owner: true, updated_at: row.created_at })
    .execute();
}

/** Ownership moves (cairn users set-owner): the previous owner takes `formerRoleId`, the new one the owner role. */
export async function moveOwnership(db: Executor, siteId: string, from: string, to: string, ownerRoleId: string, formerRoleId: string, at: string) {
  await db.updateTable('users').set({ is_owner: false, role_id: formerRoleId, updated_at: at }).where('site_id', '=', siteId).where('id', '=', from).execute();
  await db
    .updateTable('users')
    .set({ is_owner: true, role_id: ownerRoleId, is_active: true, updated_at: at })
    .where('site_id', '=', siteId)
    .where('id', '=', to)
    .execute();
}

/**
 * Before a user is deleted: their contents go to `reassignTo` (else the reference becomes null),
 * their tokens go. Revisions of contents and site blocks keep their history (the reference becomes null).
 */
export async function releaseUser(db: Executor, siteId: string, id: string, reassignTo: string | null) {
  if (reassignTo) await db.updateTable('contents').set({ author_id: reassignTo }).where('site_id', '=', siteId).where('author_id', '=', id).execute();
  await db.deleteFrom('api_tokens').where('site_id', '=', siteId).where('user_id', '=', id).execute();
}
