import type { Insertable } from 'kysely';
import type { Executor, RolesTable } from '../../db/types.js';

/** Every role of a site, oldest first (at most a few dozen: not paginated). */
export function listRoles(db: Executor, siteId: string) {
  return db.selectFrom('roles').selectAll().where('site_id', '=', siteId).orderBy('created_at').orderBy('slug').execute();
}

export function findRole(db: Executor, siteId: string, id: string) {
  return db.selectFrom('roles').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}

export function findRoleBySlug(db: Executor, siteId: string, slug: string) {
  return db.selectFrom('roles').selectAll().where('site_id', '=', siteId).where('slug', '=', slug).executeTakeFirst();
}

/** How many users hold each of these roles: one grouped query on the (site_id, role_id) index. */
export async function userCounts(db: Executor, siteId: string, roleIds: readonly string[]): Promise<Map<string, number>> {
  if (!roleIds.length) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['role_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('site_id', '=', siteId)
    .where('role_id', 'in', roleIds)
    .groupBy('role_id')
    .execute();
  return new Map(rows.map((r) => [r.role_id, Number(r.n)]));
}

export async function slugsIn(db: Executor, siteId: string, candidates: string[]): Promise<Set<string>> {
  const rows = await db.selectFrom('roles').select('slug').where('site_id', '=', siteId).where('slug', 'in', candidates).execute();
  return new Set(rows.map((r) => r.slug));
}

/** Another role of the site with this name, ignoring case. */
export function findNameClash(db: Executor, siteId: string, name: string, exceptId?: string) {
  return db
    .selectFrom('roles')
    .select('id')
    .where('site_id', '=', siteId)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .$if(!!exceptId, (q) => q.where('id', '!=', exceptId!))
    .executeTakeFirst();
}

export function insertRoles(db: Executor, rows: Insertable<RolesTable>[]) {
  return db.insertInto('roles').values(rows).execute();
}

/** Users of a deleted role move to another (decisions U1 `reassignTo`). */
export function moveUsers(db: Executor, siteId: string, fromRoleId: string, toRoleId: string, at: string) {
  return db.updateTable('users').set({ role_id: toRoleId, updated_at: at }).where('site_id', '=', siteId).where('role_id', '=', fromRoleId).execute();
}
