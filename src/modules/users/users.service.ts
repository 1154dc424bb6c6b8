import { randomUUID } from 'node:crypto';
import type { Db, Executor } from '../../db/types.js';
import { now } from '../../db/json.js';
import { notFound } from '../../shared/errors.js';
import { forgetTokens } from '../api-tokens/api-tokens.auth.js';
import { findRoleBySlug } from '../roles/roles.service.js';
import { OWNER_ROLE_SLUG } from '../roles/roles.seeds.js';
import { users } from './users.resource.js';
import * as repo from './users.repository.js';

/** The site's owner (decisions U2): exactly one user per site is (a partial unique index). */
export async function ownerOf(db: Executor, siteId: string) {
  const owner = await repo.findOwner(db, siteId);
  if (!owner) throw notFound('site owner');
  return owner;
}

export function findUser(db: Executor, siteId: string, id: string) {
  return repo.findUser(db, siteId, id);
}

/** The owner of a new site, with the owner role (createSite, in its transaction). */
export async function insertOwner(db: Executor, siteId: string, ownerRoleId: string, fullName: string, at: string): Promise<string> {
  const id = randomUUID();
  await repo.insertOwner(db, { id, site_id: siteId, full_name: fullName, role_id: ownerRoleId, created_at: at });
  return id;
}

/** A user made by the operator (CLI, tests): the API's rules, the role by slug, no escalation check. */
export function createUser(db: Db, siteId: string, input: { fullName: string; email?: string | null; roleSlug?: string }) {
  return users.service.create(db, siteId, { fullName: input.fullName, email: input.email }, { caller: null, roleSlug: input.roleSlug });
}

/** Every user of the site, oldest first (the CLI's list). */
export async function listUsers(db: Executor, siteId: string) {
  return (await users.service.list(db, siteId, { page: 1, limit: 1_000_000, sortBy: 'created_at', sortOrder: 'asc' }, false, { caller: null })).data;
}

/**
 * `cairn users set-owner` (decisions U2): ownership moves to another user of the site, with the
 * owner role; the previous owner becomes an administrator.
 */
export async function setOwner(db: Db, siteId: string, id: string) {
  await db.transaction().execute(async (tx) => {
    const user = await users.service.getRow(tx, siteId, id);
    if (user.is_owner) return;
    const previous = await ownerOf(tx, siteId);
    const ownerRole = await findRoleBySlug(tx, siteId, OWNER_ROLE_SLUG);
    if (!ownerRole) throw notFound('owner role');
    const admin = await findRoleBySlug(tx, siteId, 'administrator');
    await repo.moveOwnership(tx, siteId, previous.id, id, ownerRole.id, admin?.id ?? previous.role_id, now());
  });
  forgetTokens();
  return users.service.get(db, siteId, id);
}
