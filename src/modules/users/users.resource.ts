import { Type } from 'typebox';
import { common, fieldMap } from '../../kit/fields.js';
import { resource } from '../../kit/resource.js';
import { requireScope } from '../../plugins/auth.js';
import { AppError, invalid } from '../../shared/errors.js';
import { Nullable, Uuid } from '../../shared/schemas.js';
import { forgetTokens } from '../api-tokens/api-tokens.auth.js';
import type { Caller } from '../api-tokens/api-tokens.service.js';
import { DEFAULT_ROLE_SLUG } from '../roles/roles.seeds.js';
import { assertAssignable, assertManageable, findRoleBySlug, roleFor } from '../roles/roles.service.js';
import * as repo from './users.repository.js';

/**
 * Who writes (null: the operator at the CLI, who may name the role by slug) and, for a delete,
 * who gets the user's contents.
 */
export interface UserContext {
  caller: Caller;
  roleSlug?: string;
  reassignTo?: string;
}

const lowerEmail = (v: string | null) => (v == null ? null : v.trim().toLowerCase() || null);

/** Users (decisions U2, UR6): records for authorship and for holding tokens; no passwords, no logins. */
export const userFields = fieldMap({
  id: { column: 'id', schema: Uuid },
  fullName: {
    column: 'full_name',
    schema: Type.String(),
    input: Type.String({ minLength: 1, maxLength: 255 }),
    create: 'required',
    write: (v: string) => v.trim(),
  },
  email: {
    column: 'email',
    schema: Nullable(Type.String({ description: 'Lower-cased; unique per site' })),
    input: Nullable(Type.String({ format: 'email', maxLength: 254 })),
    write: lowerEmail,
  },
  roleId: {
    column: 'role_id',
    schema: Uuid,
    input: Type.String({
      format: 'uuid',
      description: 'Default: the author role. Setting it needs users.manage_roles (on create: for a role other than author)',
    }),
  },
  role: { schema: Type.Object({ id: Uuid, slug: Type.String(), name: Type.String() }) },
  isActive: {
    column: 'is_active',
    schema: Type.Boolean({ description: "An inactive user's tokens answer 401 TOKEN_REVOKED" }),
    input: Type.Boolean(),
    read: Boolean,
    insertDefault: true,
  },
  isOwner: { column: 'is_owner', schema: Type.Boolean({ description: 'The one owner of the site: cannot be demoted, deactivated or deleted' }), read: Boolean },
  tokenCount: { schema: Type.Integer({ description: 'Tokens not revoked' }) },
  lastActiveAt: { schema: Nullable(Type.String({ format: 'date-time', description: 'The latest lastUsedAt of their tokens' })) },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

export const users = resource<'users', typeof userFields.fields, {}, UserContext>({
  table: 'users',
  noun: 'user',
  name: 'User',
  plural: 'Users',
  path: '/users',
  scope: 'users',
  id: 'uuid',
  fields: userFields,
  examples: {
    record: {
      id: '3f8e2b71-5c4d-4a9e-8b16-7d2c9e0f1a53',
      fullName: 'Ada Lovelace',
      email: 'ada@example.com',
      roleId: 'c1d7e4a2-8b3f-4e69-9a05-2f6b8d1c7e40',
      role: { id: 'c1d7e4a2-8b3f-4e69-9a05-2f6b8d1c7e40', slug: 'editor', name: 'Editor' },
      isActive: true,
      isOwner: false,
      tokenCount: 2,
      lastActiveAt: '2026-03-21T07:58:00.000Z',
      createdAt: '2026-01-12T11:20:00.000Z',
      updatedAt: '2026-01-12T11:20:00.000Z',
    },
    create: { fullName: 'Ada Lovelace', email: 'ada@example.com', roleId: 'c1d7e4a2-8b3f-4e69-9a05-2f6b8d1c7e40' },
  },
  list: {
    sort: ['created_at', 'full_name', 'email'],
    search: ['full_name', 'email'],
    common: ['search'],
    filters: { roleId: Type.Optional(Type.String({ format: 'uuid' })), isActive: Type.Optional(Type.Boolean()) },
    apply: (qb, query: { roleId?: string; isActive?: boolean }) => {
      let q = qb;
      if (query.roleId) q = q.where('role_id', '=', query.roleId);
      if (query.isActive !== undefined) q = q.where('is_active', '=', query.isActive);
      return q;
    },
  },
  unique: [{ field: 'email', code: 'EMAIL_TAKEN' }],
  computed: async (db, siteId, rows) => {
    const { roles, tokens } = await repo.pageFigures(db, siteId, rows as Array<{ id: string; role_id: string }>);
    return rows.map((r) => {
      const t = tokens.get(r.id);
      return { role: roles.get(r.role_id), tokenCount: t?.count ?? 0, lastActiveAt: t?.lastUsedAt ?? null };
    });
  },
  rules: {
    // A role other than the default author needs users.manage_roles; every role's scopes must be the caller's (decisions U2, U4).
    async create(tx, { siteId, input, row, context }) {
      const role = context.roleSlug ? await findRoleBySlug(tx, siteId, context.roleSlug) : await roleFor(tx, siteId, input.roleId, 'roleId');
      if (!role) throw invalid('REFERENCE_INVALID', 'role', `No role ${context.roleSlug} on this site`);
      if (context.caller && role.slug !== DEFAULT_ROLE_SLUG) requireScope(context.caller, 'users.manage_roles', null, 'Giving a user a role other than author');
      assertAssignable(context.caller, role);
      row.role_id = role.id;
      row.is_owner = false;
    },
    async update(tx, { siteId, current, input, patch, context }) {
      const roleChange = patch.role_id !== undefined && patch.role_id !== current.role_id;
      if (current.is_owner && (roleChange || patch.is_active === false)) throw new AppError('OWNER_PROTECTED');
      if (input.roleId !== undefined && context.caller) requireScope(context.caller, 'users.manage_roles', null, "Setting a user's role");
      assertManageable(context.caller, await roleFor(tx, siteId, current.role_id ?? undefined, 'roleId'));
      if (roleChange) assertAssignable(context.caller, await roleFor(tx, siteId, patch.role_id, 'roleId'));
    },
    // Their tokens go with them; their contents to reassignTo, or they keep no author (decisions U2).
    async delete(tx, { siteId, current, context }) {
      if (current.is_owner) throw new AppError('OWNER_PROTECTED');
      assertManageable(context.caller, await roleFor(tx, siteId, current.role_id ?? undefined, 'roleId'));
      const heir = context.reassignTo;
      if (heir && (heir === current.id || !(await users.repo.find(tx, siteId, { id: heir }, ['id'])))) {
        throw invalid('REFERENCE_INVALID', 'reassignTo', 'reassignTo must be another user of this site');
      }
      await repo.releaseUser(tx, siteId, current.id, heir ?? null);
    },
  },
  // A new role, a deactivation or a deletion reaches the user's tokens on their next request.
  hooks: { afterWrite: () => forgetTokens() },
  docs: {
    create: {
      description:
        "Inviting someone is a user plus a token made for them (`POST /api-tokens` with `userId`). 422 `EMAIL_TAKEN` for an e-mail of another user; the role's scopes must be held by the caller (403 `SCOPE_ESCALATION`).",
    },
    update: {
      description:
        "A new role or deactivation reaches the user's tokens on their next request. The owner cannot be demoted or deactivated (409 `OWNER_PROTECTED`); a user whose role holds scopes the caller lacks cannot be changed (403 `USER_NOT_MANAGEABLE`).",
    },
    delete: {
      summary: 'Delete a user with their tokens',
      description:
        'Their contents go to `reassignTo`, or keep no author; revisions keep their history without it. A user whose role holds scopes the caller lacks cannot be deleted (403 `USER_NOT_MANAGEABLE`).',
    },
  },
});
