import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/types.js';
import { now } from '../../db/json.js';
import { AppError, invalid, notFound } from '../../shared/errors.js';
import { pageMeta } from '../../shared/pagination.js';
import { requireScope } from '../../plugins/auth.js';
import { forgetTokens } from '../api-tokens/api-tokens.auth.js';
import type { Caller } from '../api-tokens/api-tokens.service.js';
import { assertAssignable, findRoleBySlug, roleFor } from '../roles/roles.service.js';
import { DEFAULT_ROLE_SLUG, OWNER_ROLE_SLUG } from '../roles/roles.seeds.js';
import * as repo from './users.repository.js';

/** A user as answers show it (decisions U2); users have no passwords: the service has no logins. */
export function toUser(r: repo.UserView) {
  return {
    id: r.id,
    fullName: r.full_name,
    email: r.email,
    role: { id: r.role_id, slug: r.role_slug, name: r.role_name },
    isActive: Boolean(r.is_active),
    isOwner: Boolean(r.is_owner),
    tokenCount: Number(r.token_count ?? 0),
    lastActiveAt: r.last_active_at ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function getUser(db: Executor, siteId: string, id: string) {
  const row = await repo.findUser(db, siteId, id);
  if (!row) throw notFound('user');
  return row;
}

export async function listUsers(db: Executor, siteId: string, query: repo.UserListQuery) {
  const { rows, total } = await repo.listUsers(db, siteId, query);
  return { data: rows.map(toUser), meta: pageMeta(total, query.page, query.limit) };
}

/** The site's owner (decisions U2): exactly one user per site is. */
export async function ownerOf(db: Executor, siteId: string) {
  const owner = await repo.findOwner(db, siteId);
  if (!owner) throw notFound('site owner');
  return owner;
}

export function findUser(db: Executor, siteId: string, id: string) {
  return repo.findUser(db, siteId, id);
}

const normalEmail = (email: string | null | undefined) => (email == null ? email : email.trim().toLowerCase() || null);

async function checkEmail(db: Executor, siteId: string, email: string | null | undefined, exceptId?: string) {
  if (email && (await repo.emailTaken(db, siteId, email, exceptId))) throw invalid('EMAIL_TAKEN', 'email');
}

/** The owner of a new site, with the owner role (createSite, in its transaction). */
export async function insertOwner(db: Executor, siteId: string, ownerRoleId: string, fullName: string, at: string): Promise<string> {
  const id = randomUUID();
  await repo.insertUser(db, {
    id,
    site_id: siteId,
    full_name: fullName,
    email: null,
    role_id: ownerRoleId,
    is_active: true,
    is_owner: true,
    created_at: at,
    updated_at: at,
  });
  return id;
}

export interface UserInput {
  fullName: string;
  email?: string | null;
  roleId?: string;
  isActive?: boolean;
}

/**
 * POST /users (and the CLI, with `caller` null). A role other than the default `author` needs
 * `users.manage_roles`, and its scopes must all be held by the caller (decisions U2, U4).
 */
export async function createUser(db: Db, caller: Caller, siteId: string, input: UserInput & { roleSlug?: string }) {
  return db.transaction().execute(async (tx) => {
    const role = input.roleSlug ? await findRoleBySlug(tx, siteId, input.roleSlug) : await roleFor(tx, siteId, input.roleId, 'roleId');
    if (!role) throw invalid('REFERENCE_INVALID', 'role', `No role ${input.roleSlug} on this site`);
    if (caller && role.slug !== DEFAULT_ROLE_SLUG) requireScope(caller, 'users.manage_roles', null, 'Giving a user a role other than author');
    assertAssignable(caller, role);
    const email = normalEmail(input.email) ?? null;
    await checkEmail(tx, siteId, email);
    const at = now();
    const id = randomUUID();
    await repo.insertUser(tx, {
      id,
      site_id: siteId,
      full_name: input.fullName.trim(),
      email,
      role_id: role.id,
      is_active: input.isActive ?? true,
      is_owner: false,
      created_at: at,
      updated_at: at,
    });
    return toUser(await getUser(tx, siteId, id));
  });
}

export async function updateUser(db: Db, caller: NonNullable<Caller>, siteId: string, id: string, patch: Partial<UserInput>) {
  const updated = await db.transaction().execute(async (tx) => {
    const user = await getUser(tx, siteId, id);
    const roleChange = patch.roleId !== undefined && patch.roleId !== user.role_id;
    if (user.is_owner && (roleChange || patch.isActive === false)) throw new AppError('OWNER_PROTECTED');
    if (patch.roleId !== undefined) {
      requireScope(caller, 'users.manage_roles', null, "Setting a user's role");
      if (roleChange) assertAssignable(caller, await roleFor(tx, siteId, patch.roleId, 'roleId'));
    }
    const email = normalEmail(patch.email);
    await checkEmail(tx, siteId, email, id);
    await repo.updateUser(tx, siteId, id, {
      full_name: patch.fullName?.trim(),
      email,
      role_id: roleChange ? patch.roleId : undefined,
      is_active: patch.isActive,
      updated_at: now(),
    });
    return toUser(await getUser(tx, siteId, id));
  });
  // The user's tokens act with the new role, or stop, from their next request.
  if (patch.roleId !== undefined || patch.isActive !== undefined) forgetTokens();
  return updated;
}

/** Deletes a user with their tokens; their contents go to `reassignTo` or keep no author (decisions U2). */
export async function deleteUser(db: Db, siteId: string, id: string, reassignTo?: string): Promise<void> {
  const tokenIds = await db.transaction().execute(async (tx) => {
    const user = await getUser(tx, siteId, id);
    if (user.is_owner) throw new AppError('OWNER_PROTECTED');
    if (reassignTo && (reassignTo === id || !(await repo.findUser(tx, siteId, reassignTo)))) {
      throw invalid('REFERENCE_INVALID', 'reassignTo', 'reassignTo must be another user of this site');
    }
    const ids = await repo.tokenIdsOf(tx, siteId, id);
    await repo.deleteUser(tx, siteId, id, reassignTo ?? null);
    return ids;
  });
  for (const tokenId of tokenIds) forgetTokens(tokenId);
}

/**
 * `cairn users set-owner` (decisions U2): ownership moves to another user of the site, with the
 * owner role; the previous owner becomes an administrator.
 */
export async function setOwner(db: Db, siteId: string, id: string) {
  await db.transaction().execute(async (tx) => {
    const user = await getUser(tx, siteId, id);
    if (user.is_owner) return;
    const previous = await ownerOf(tx, siteId);
    const ownerRole = await findRoleBySlug(tx, siteId, OWNER_ROLE_SLUG);
    const admin = await findRoleBySlug(tx, siteId, 'administrator');
    if (!ownerRole) throw notFound('owner role');
    const at = now();
    await repo.updateUser(tx, siteId, previous.id, { is_owner: false, role_id: admin?.id ?? previous.role_id, updated_at: at });
    await repo.updateUser(tx, siteId, id, { is_owner: true, role_id: ownerRole.id, is_active: true, updated_at: at });
  });
  forgetTokens();
  return toUser(await getUser(db, siteId, id));
}
