import type { Insertable, Updateable } from 'kysely';
import type { Executor, RolesTable } from '../../db/types.js';

/** A role with the number of users holding it (one grouped subquery, not one per role). */
function roleViews(db: Executor, siteId: string) {
  return db
    .selectFrom('roles as r')
    .select(['r.id', 'r.site_id', 'r.slug', 'r.name', 'r.description', 'r.scopes', 'r.is_system', 'r.created_at', 'r.updated_at'])
    .select((eb) =>
      eb
        .selectFrom('users as u')
        .select((e) => e.fn.countAll<number>().as('n'))
        .whereRef('u.site_id', '=', 'r.site_id')
        .whereRef('u.role_id', '=', 'r.id')
        .as('user_count'),
    )
    .where('r.site_id', '=', siteId);
}

export type RoleView = NonNullable<Awaited<ReturnType<typeof findRole>>>;

export function listRoles(db: Executor, siteId: string) {
  return roleViews(db, siteId).orderBy('r.created_at').orderBy('r.slug').execute();
}

export function findRole(db: Executor, siteId: string, id: string) {
  return roleViews(db, siteId).where('r.id', '=', id).executeTakeFirst();
}

export function findRoleBySlug(db: Executor, siteId: string, slug: string) {
  return roleViews(db, siteId).where('r.slug', '=', slug).executeTakeFirst();
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

export function updateRole(db: Executor, siteId: string, id: string, patch: Updateable<RolesTable>) {
  return db.updateTable('roles').set(patch).where('site_id', '=', siteId).where('id', '=', id).execute();
}

/** Users of a deleted role move to another (decisions U1 `reassignTo`). */
export function moveUsers(db: Executor, siteId: string, fromRoleId: string, toRoleId: string, at: string) {
  return db.updateTable('users').set({ role_id: toRoleId, updated_at: at }).where('site_id', '=', siteId).where('role_id', '=', fromRoleId).execute();
}

export function deleteRole(db: Executor, siteId: string, id: string) {
  return db.deleteFrom('roles').where('site_id', '=', siteId).where('id', '=', id).execute();
}
