import { randomUUID } from 'node:crypto';
import type { Executor } from '../../db/types.js';
import { toJson } from '../../db/json.js';
import { invalid } from '../../shared/errors.js';
import { ALL_SCOPES, DELIVERY_SCOPES, describeScope, SCOPE_AREAS } from '../../shared/scopes.js';
import type { RouteInfo } from '../../plugins/routes.js';
import { DEFAULT_ROLE_SLUG, ROLE_SEEDS } from './roles.seeds.js';
import { roles } from './roles.resource.js';
import * as repo from './roles.repository.js';

export { assertAssignable, assertManageable, roleScopes } from './roles.resource.js';

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

/** Every role of the site as answers show it, oldest first. */
export async function listRoles(db: Executor, siteId: string) {
  return roles.service.present(db, siteId, await repo.listRoles(db, siteId));
}

/** A role named by a request's field (a user's `roleId`): unknown is a 422 on that field; none given is the default role. */
export async function roleFor(db: Executor, siteId: string, id: string | undefined, field: string) {
  const row = id ? await repo.findRole(db, siteId, id) : await repo.findRoleBySlug(db, siteId, DEFAULT_ROLE_SLUG);
  if (!row) throw invalid('REFERENCE_INVALID', field, id ? `No role ${id} on this site` : `The site has no ${DEFAULT_ROLE_SLUG} role: give a ${field}`);
  return row;
}

export function findRoleBySlug(db: Executor, siteId: string, slug: string) {
  return repo.findRoleBySlug(db, siteId, slug);
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
