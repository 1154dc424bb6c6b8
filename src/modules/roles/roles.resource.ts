import { Type } from 'typebox';
import { now, parseJson, toJson } from '../../db/json.js';
import type { Executor } from '../../db/types.js';
import { common, fieldMap } from '../../kit/fields.js';
import { resource } from '../../kit/resource.js';
import { requireScope } from '../../plugins/auth.js';
import { AppError, invalid } from '../../shared/errors.js';
import { Nullable, Uuid } from '../../shared/schemas.js';
import { findFreeSlug, slugify } from '../../shared/slug.js';
import { ALL_SCOPES, assertHeld } from '../../shared/scopes.js';
import { forgetTokens } from '../api-tokens/api-tokens.auth.js';
import { type Caller, parseScopes } from '../api-tokens/api-tokens.service.js';
import * as repo from './roles.repository.js';

/** Who writes (null: the operator at the CLI) and, for a delete, where the role's users go. */
export interface RoleContext {
  caller: Caller;
  reassignTo?: string;
}

/** A role's scopes: the owner role (system) holds every scope of the catalog, present and future. */
export function roleScopes(r: { scopes: unknown; is_system: unknown }): string[] {
  return r.is_system ? [...ALL_SCOPES] : parseJson<string[]>(r.scopes, []);
}

export const ScopeList = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 300,
  description: 'Catalog scopes (GET /permissions lists them); an unknown one is a 422 on `scopes[i]`. Setting them needs `permissions.assign`',
});

/** Roles (decisions U1, UR1): named scope lists per site. */
export const roleFields = fieldMap({
  id: { column: 'id', schema: Uuid },
  slug: {
    column: 'slug',
    schema: Type.String({ description: 'Made from the name at creation, never changed: owner, administrator, editor, author, viewer, ...' }),
  },
  name: {
    column: 'name',
    schema: Type.String(),
    input: Type.String({ minLength: 1, maxLength: 100, description: 'Unique per site, ignoring case' }),
    create: 'required',
    write: (v: string) => v.trim(),
  },
  description: { column: 'description', schema: Nullable(Type.String()), input: Nullable(Type.String({ maxLength: 500 })) },
  scopes: {
    column: 'scopes',
    columns: ['is_system'],
    from: (row: Record<string, unknown>) => roleScopes(row as { scopes: unknown; is_system: unknown }),
    schema: Type.Array(Type.String(), { description: 'The owner role holds every scope of the catalog' }),
    input: ScopeList,
    create: 'required',
    write: (v: string[]) => toJson([...new Set(v)]),
  },
  isSystem: {
    column: 'is_system',
    schema: Type.Boolean({ description: 'The owner role: cannot be changed, deleted or given to another user' }),
    read: Boolean,
  },
  userCount: { schema: Type.Integer() },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

async function checkName(db: Executor, siteId: string, name: string, exceptId?: string) {
  if (await repo.findNameClash(db, siteId, name, exceptId)) throw invalid('NAME_TAKEN', 'name', 'Another role of this site has this name');
}

/** Granting scopes to a role needs `permissions.assign` and scopes the caller holds (decisions U1, U4). */
function checkGrant(caller: Caller, scopes: string[]) {
  parseScopes(scopes, 'management');
  if (!caller) return;
  requireScope(caller, 'permissions.assign', null, 'Setting the scopes of a role');
  assertHeld(caller.scopes, scopes, 'The role');
}

/**
 * Giving a role to a user grants its scopes (decisions U4): the caller must hold them all. The
 * owner role belongs to the site's owner alone; `cairn users set-owner` moves it.
 */
export function assertAssignable(caller: Caller, role: { slug: string; scopes: unknown; is_system: unknown }): void {
  if (role.is_system) throw new AppError('ROLE_PROTECTED', { message: "The owner role belongs to the site's owner alone (cairn users set-owner moves it)." });
  if (caller) assertHeld(caller.scopes, roleScopes(role), `The role ${role.slug}`);
}

/**
 * Changing, deactivating, reactivating or deleting a user acts on their tokens' power (decisions
 * UR10): the caller must hold every scope of the user's role, as it must hold a token's to manage it.
 */
export function assertManageable(caller: Caller, role: { scopes: unknown; is_system: unknown } | undefined): void {
  if (!caller || !role) return;
  const missing = roleScopes(role).filter((s) => !caller.scopes.has(s));
  if (missing.length) throw new AppError('USER_NOT_MANAGEABLE', { message: `This user's role holds scopes you do not hold (${missing.join(', ')}).` });
}

export const roles = resource<'roles', typeof roleFields.fields, {}, RoleContext>({
  table: 'roles',
  noun: 'role',
  name: 'Role',
  plural: 'Roles',
  tag: 'Roles and permissions',
  path: '/roles',
  scope: 'roles',
  id: 'uuid',
  fields: roleFields,
  list: { sort: ['created_at', 'name'], search: ['name'], common: [] },
  computed: async (db, siteId, rows) => {
    const counts = await repo.userCounts(
      db,
      siteId,
      rows.map((r) => r.id),
    );
    return rows.map((r) => ({ userCount: counts.get(r.id) ?? 0 }));
  },
  rules: {
    prepare(_db, { input, context }) {
      if (input.scopes.length) checkGrant(context.caller, input.scopes);
    },
    async create(tx, { siteId, row }) {
      await checkName(tx, siteId, row.name);
      row.slug = await findFreeSlug(slugify(row.name, 100) || 'role', (c) => repo.slugsIn(tx, siteId, c));
      row.is_system = false;
    },
    async update(tx, { siteId, current, input, patch, context }) {
      if (current.is_system) throw new AppError('ROLE_PROTECTED');
      if (input.scopes) checkGrant(context.caller, input.scopes);
      if (patch.name) await checkName(tx, siteId, patch.name, current.id);
    },
    async delete(tx, { siteId, current, context }) {
      if (current.is_system) throw new AppError('ROLE_PROTECTED');
      const held = (await repo.userCounts(tx, siteId, [current.id])).get(current.id) ?? 0;
      if (!held) return;
      const to = context.reassignTo;
      if (!to) throw new AppError('ROLE_IN_USE', { message: `${held} users hold this role: delete it with reassignTo=<roleId>.` });
      const target = to === current.id ? undefined : await repo.findRole(tx, siteId, to);
      if (!target) throw invalid('REFERENCE_INVALID', 'reassignTo', 'reassignTo must be another role of this site');
      assertAssignable(context.caller, target);
      await repo.moveUsers(tx, siteId, current.id, target.id, now());
    },
  },
  // Tokens of the role's users act with its new scopes, or their new role, from the next request.
  hooks: { afterWrite: () => forgetTokens() },
  docs: {
    create: {
      description:
        'Every scope given must be held by the calling token (403 `SCOPE_ESCALATION`). A name used by another role (any case) is a 422 `NAME_TAKEN`.',
    },
    update: { description: "The owner role answers 409 `ROLE_PROTECTED`. New scopes reach the role's users' tokens on their next request." },
    delete: {
      summary: 'Delete a role; its users move to reassignTo',
      description: 'Users hold it and no `reassignTo`: 409 `ROLE_IN_USE`; the owner role: 409 `ROLE_PROTECTED`.',
    },
  },
});
