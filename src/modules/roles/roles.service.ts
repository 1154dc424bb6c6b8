import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/types.js';
import { now, parseJson, toJson } from '../../db/json.js';
import { AppError, invalid, notFound } from '../../shared/errors.js';
import { findFreeSlug, slugify } from '../../shared/slug.js';
import { ALL_SCOPES, assertHeld, DELIVERY_SCOPES, describeScope, SCOPE_AREAS } from '../../shared/scopes.js';
import { requireScope } from '../../plugins/auth.js';
import type { RouteInfo } from '../../plugins/routes.js';
import { forgetTokens } from '../api-tokens/api-tokens.auth.js';
import type { Caller } from '../api-tokens/api-tokens.service.js';
import { DEFAULT_ROLE_SLUG, ROLE_SEEDS } from './roles.seeds.js';
import * as repo from './roles.repository.js';

/** A role's scopes: the owner role (system) holds every scope of the catalog, present and future. */
export function roleScopes(r: { scopes: unknown; is_system: unknown }): string[] {
  return r.is_system ? [...ALL_SCOPES] : parseJson<string[]>(r.scopes, []);
}

export function toRole(r: repo.RoleView) {
  return {
    id: r.id,
    slug: r.slug,
    name: r.name,
    description: r.description,
    scopes: roleScopes(r),
    isSystem: Boolean(r.is_system),
    userCount: Number(r.user_count ?? 0),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The five roles of a new site (decisions U1); returns their ids by slug. */
export async function seedRoles(db: Executor, siteId: string, at: string): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  const rows = ROLE_SEEDS.map((seed) => {
    ids[seed.slug] = randomUUID();
    return {
      id: ids[seed.slug]!,
      site_id: siteId,
      slug: seed.slug,
      name: seed.name,
      description: seed.description,
      scopes: toJson(seed.scopes),
      is_system: seed.system,
      created_at: at,
      updated_at: at,
    };
  });
  await repo.insertRoles(db, rows);
  return ids;
}

export async function listRoles(db: Executor, siteId: string) {
  return (await repo.listRoles(db, siteId)).map(toRole);
}

export async function getRole(db: Executor, siteId: string, id: string) {
  const row = await repo.findRole(db, siteId, id);
  if (!row) throw notFound('role');
  return row;
}

/** A role named by a request's field (a user's `roleId`, a `reassignTo`): unknown is a 422 on that field. */
export async function roleFor(db: Executor, siteId: string, id: string | undefined, field: string) {
  const row = id ? await repo.findRole(db, siteId, id) : await repo.findRoleBySlug(db, siteId, DEFAULT_ROLE_SLUG);
  if (!row) throw invalid('REFERENCE_INVALID', field, id ? `No role ${id} on this site` : `The site has no ${DEFAULT_ROLE_SLUG} role: give a ${field}`);
  return row;
}

export function findRoleBySlug(db: Executor, siteId: string, slug: string) {
  return repo.findRoleBySlug(db, siteId, slug);
}

/**
 * Giving a role to a user grants its scopes (decisions U4): the caller must hold them all. The
 * owner role belongs to the site's owner alone; `cairn users set-owner` moves it.
 */
export function assertAssignable(caller: Caller, role: repo.RoleView): void {
  if (role.is_system) throw new AppError('ROLE_PROTECTED', { message: "The owner role belongs to the site's owner alone (cairn users set-owner moves it)." });
  if (caller) assertHeld(caller.scopes, roleScopes(role), `The role ${role.slug}`);
}

async function checkName(db: Executor, siteId: string, name: string, exceptId?: string) {
  if (await repo.findNameClash(db, siteId, name, exceptId)) throw invalid('NAME_TAKEN', 'name', 'Another role of this site has this name');
}

/** Granting scopes to a role needs `permissions.assign` and scopes the caller holds (decisions U1, U4). */
function checkGrant(caller: NonNullable<Caller>, scopes: readonly string[], what: string) {
  requireScope(caller, 'permissions.assign', null, 'Setting the scopes of a role');
  assertHeld(caller.scopes, scopes, what);
}

export async function createRole(db: Db, caller: NonNullable<Caller>, siteId: string, input: { name: string; description?: string | null; scopes: string[] }) {
  const name = input.name.trim();
  if (input.scopes.length) checkGrant(caller, input.scopes, 'The role');
  return db.transaction().execute(async (tx) => {
    await checkName(tx, siteId, name);
    const slug = await findFreeSlug(slugify(name, 100) || 'role', (c) => repo.slugsIn(tx, siteId, c));
    const at = now();
    const id = randomUUID();
    await repo.insertRoles(tx, [
      {
        id,
        site_id: siteId,
        slug,
        name,
        description: input.description ?? null,
        scopes: toJson([...new Set(input.scopes)]),
        is_system: false,
        created_at: at,
        updated_at: at,
      },
    ]);
    return toRole(await getRole(tx, siteId, id));
  });
}

export async function updateRole(
  db: Db,
  caller: NonNullable<Caller>,
  siteId: string,
  id: string,
  patch: { name?: string; description?: string | null; scopes?: string[] },
) {
  return db.transaction().execute(async (tx) => {
    const role = await getRole(tx, siteId, id);
    if (role.is_system) throw new AppError('ROLE_PROTECTED');
    if (patch.scopes) checkGrant(caller, patch.scopes, 'The role');
    const name = patch.name?.trim();
    if (name) await checkName(tx, siteId, name, id);
    await repo.updateRole(tx, siteId, id, {
      name,
      description: patch.description,
      scopes: patch.scopes && toJson([...new Set(patch.scopes)]),
      updated_at: now(),
    });
    // Tokens of the role's users act with the new scopes from their next request.
    if (patch.scopes) forgetTokens();
    return toRole(await getRole(tx, siteId, id));
  });
}

export async function deleteRole(db: Db, caller: Caller, siteId: string, id: string, reassignTo?: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const role = await getRole(tx, siteId, id);
    if (role.is_system) throw new AppError('ROLE_PROTECTED');
    if (Number(role.user_count) > 0) {
      if (!reassignTo) throw new AppError('ROLE_IN_USE', { message: `${role.user_count} users hold this role: delete it with reassignTo=<roleId>.` });
      if (reassignTo === id) throw invalid('REFERENCE_INVALID', 'reassignTo', 'reassignTo must be another role');
      const target = await roleFor(tx, siteId, reassignTo, 'reassignTo');
      assertAssignable(caller, target);
      await repo.moveUsers(tx, siteId, id, target.id, now());
    }
    await repo.deleteRole(tx, siteId, id);
  });
  forgetTokens();
}

/**
 * Every scope of the catalog (decisions U1, X1): its area, what it grants, its plain twin when it
 * is a `.own` scope, whether delivery tokens may hold it, and whether any endpoint uses it (a
 * route's scope or conditional scope; a `.own` scope when its twin is used).
 */
export function permissionCatalog(routes: readonly RouteInfo[]) {
  const used = new Set(routes.flatMap((r) => [r.scope, ...r.conditionalScopes]));
  const delivery = new Set<string>(DELIVERY_SCOPES);
  return ALL_SCOPES.map((scope) => {
    const ownOf = scope.endsWith('.own') ? scope.slice(0, -4) : null;
    return {
      scope,
      area: SCOPE_AREAS.get(scope)!,
      description: describeScope(scope),
      ownOf,
      deliveryAllowed: delivery.has(scope),
      implemented: used.has(ownOf ?? scope),
    };
  });
}
