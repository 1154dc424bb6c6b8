import { randomBytes, randomUUID } from 'node:crypto';
import type { Executor } from '../../db/types.js';
import { now, parseJson, toJson } from '../../db/json.js';
import { ALL_SCOPES, assertHeld, isDeliveryScope, isScope, type Scope } from '../../shared/scopes.js';
import { AppError, invalid, notFound } from '../../shared/errors.js';
import { pageMeta } from '../../shared/pagination.js';
import { effectiveScopes, forgetTokens, hashSecret, type TokenKind } from './api-tokens.auth.js';
import * as repo from './api-tokens.repository.js';

export type { TokenKind } from './api-tokens.auth.js';

/**
 * Who asks for a change: a token (its effective scopes bound what it may grant, decisions U4),
 * or null for the operator at the CLI, who skips only the escalation checks.
 */
export type Caller = { tokenId: string; userId: string; scopes: ReadonlySet<string> } | null;

export function parseScopes(input: string | readonly string[], kind: TokenKind): Scope[] {
  const list =
    typeof input === 'string'
      ? input.trim() === 'all'
        ? [...ALL_SCOPES]
        : input
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
      : [...input];
  const errors: Record<string, string[]> = {};
  list.forEach((s, i) => {
    if (!isScope(s)) errors[`scopes[${i}]`] = [`unknown scope ${s}`];
  });
  if (Object.keys(errors).length) throw new AppError('VALIDATION_FAILED', { message: `Unknown scopes: ${list.filter((s) => !isScope(s)).join(', ')}`, errors });
  const scopes = [...new Set(list)] as Scope[];
  // A delivery token keeps only the content groups' read scopes (decisions G13).
  return kind === 'delivery' ? scopes.filter(isDeliveryScope) : scopes;
}

const DAY_MS = 86_400_000;

/** `expiresAt` (a future date, or null for never) or `expiresInDays` (decisions U4). */
export function expiryOf(input: { expiresAt?: string | null; expiresInDays?: number | null }, at = Date.now()): string | null {
  if (input.expiresInDays != null) return new Date(at + input.expiresInDays * DAY_MS).toISOString();
  if (input.expiresAt == null) return null;
  const t = Date.parse(input.expiresAt);
  if (Number.isNaN(t)) throw invalid('VALIDATION_FAILED', 'expiresAt', 'expiresAt must be an ISO 8601 date-time');
  if (t <= at) throw invalid('VALIDATION_FAILED', 'expiresAt', 'expiresAt must be in the future');
  return new Date(t).toISOString();
}

const tokenValue = (id: string, secret: string) => `cairn_${id.replace(/-/g, '')}_${secret}`;
const newSecret = () => randomBytes(32).toString('base64url');

export interface CreatedToken {
  id: string;
  siteId: string;
  userId: string;
  name: string;
  kind: TokenKind;
  scopes: Scope[];
  expiresAt: string | null;
  createdAt: string;
  /** Shown once; only its hash is stored. */
  token: string;
}

/** Stores a token as given (the operator's path and the API's, after its checks). */
export async function createToken(
  db: Executor,
  input: {
    siteId: string;
    userId: string;
    name?: string;
    description?: string | null;
    kind?: TokenKind;
    scopes: string | readonly string[];
    expiresAt?: string | null;
    createdByTokenId?: string | null;
  },
): Promise<CreatedToken> {
  const kind = input.kind ?? 'management';
  const scopes = parseScopes(input.scopes, kind);
  const id = randomUUID();
  const secret = newSecret();
  const createdAt = now();
  const name = input.name?.trim() || `${kind} token`;
  await repo.insertToken(db, {
    id,
    site_id: input.siteId,
    user_id: input.userId,
    name,
    description: input.description ?? null,
    kind,
    secret_hash: hashSecret(secret),
    scopes: toJson(scopes),
    expires_at: input.expiresAt ?? null,
    created_at: createdAt,
    created_by_token_id: input.createdByTokenId ?? null,
  });
  return { id, siteId: input.siteId, userId: input.userId, name, kind, scopes, expiresAt: input.expiresAt ?? null, createdAt, token: tokenValue(id, secret) };
}

function statusOf(r: { revoked_at: string | null; expires_at: string | null }, at = Date.now()): repo.TokenStatus {
  if (r.revoked_at) return 'revoked';
  return r.expires_at && Date.parse(r.expires_at) <= at ? 'expired' : 'active';
}

/** A token as answers show it (decisions U4); never its value or hash. */
export function toToken(r: repo.TokenView) {
  const scopes = parseJson<string[]>(r.scopes, []);
  const effective = effectiveScopes(r.scopes, r.role_scopes, Boolean(r.role_is_system));
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    kind: r.kind,
    scopes,
    effectiveScopes: scopes.filter((s) => effective.has(s)),
    user: { id: r.user_id, fullName: r.user_name },
    tokenPrefix: `cairn_${r.id.replace(/-/g, '').slice(0, 8)}`,
    status: statusOf(r),
    lastUsedAt: r.last_used_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function getToken(db: Executor, siteId: string, id: string) {
  const row = await repo.findToken(db, siteId, id);
  if (!row) throw notFound('API token');
  return row;
}

export async function listSiteTokens(db: Executor, siteId: string, query: repo.TokenListQuery) {
  const { rows, total } = await repo.listTokens(db, siteId, query, now());
  return { data: rows.map(toToken), meta: pageMeta(total, query.page, query.limit) };
}

/** Every token of a site for the CLI, oldest first. */
export async function listTokens(db: Executor, siteId: string) {
  return (await repo.allTokens(db, siteId)).map((r) => ({ ...toToken(r), siteId: r.site_id, userId: r.user_id }));
}

/** A token's user, whose role caps what the token may hold. */
async function holderOf(db: Executor, siteId: string, userId: string, field: string) {
  const user = await repo.findUserWithRole(db, siteId, userId);
  if (!user) throw invalid('REFERENCE_INVALID', field, `No user ${userId} on this site`);
  return user;
}

/** A token never holds more than its user's role (decisions U3, U4): asking for more is an escalation. */
function assertWithinRole(user: { role_scopes: unknown; role_is_system: unknown }, scopes: readonly string[]) {
  if (user.role_is_system) return;
  assertHeld(new Set(parseJson<string[]>(user.role_scopes, [])), scopes, "The token's scopes exceed its user's role and");
}

/** A token may change, regenerate or delete only tokens whose scopes it holds (decisions U4). */
function assertManageable(caller: Caller, row: repo.TokenView) {
  if (!caller) return;
  const missing = parseJson<string[]>(row.scopes, []).filter((s) => !caller.scopes.has(s));
  if (missing.length) throw new AppError('TOKEN_NOT_MANAGEABLE', { message: `This token holds scopes you do not hold (${missing.join(', ')}).` });
}

export interface TokenCreateInput {
  name: string;
  description?: string | null;
  kind?: TokenKind;
  scopes?: string[];
  preset?: 'read-only' | 'full-access';
  expiresAt?: string | null;
  expiresInDays?: number | null;
  userId?: string;
}

/** POST /api-tokens: the new token never exceeds the caller nor its user (decisions U4). */
export async function issueToken(db: Executor, caller: NonNullable<Caller>, siteId: string, input: TokenCreateInput) {
  const kind = input.kind ?? 'management';
  if (!input.scopes === !input.preset) throw invalid('VALIDATION_FAILED', 'scopes', 'Give either scopes or preset');
  if (input.expiresAt != null && input.expiresInDays != null) throw invalid('VALIDATION_FAILED', 'expiresInDays', 'Give either expiresAt or expiresInDays');
  const expiresAt = expiryOf(input);
  const user = await holderOf(db, siteId, input.userId ?? caller.userId, 'userId');
  const held = [...caller.scopes];
  const wanted = input.preset ? (input.preset === 'read-only' ? held.filter((s) => s.endsWith('.view')) : held) : input.scopes!;
  let scopes = parseScopes(wanted, kind);
  if (input.preset && !user.role_is_system) {
    const role = new Set(parseJson<string[]>(user.role_scopes, []));
    scopes = scopes.filter((s) => role.has(s));
  }
  assertHeld(caller.scopes, scopes, 'The token');
  assertWithinRole(user, scopes);
  const created = await createToken(db, {
    siteId,
    userId: user.id,
    name: input.name,
    description: input.description,
    kind,
    scopes,
    expiresAt,
    createdByTokenId: caller.tokenId,
  });
  return { ...toToken(await getToken(db, siteId, created.id)), token: created.token };
}

export async function updateSiteToken(
  db: Executor,
  caller: Caller,
  siteId: string,
  id: string,
  patch: { name?: string; description?: string | null; scopes?: string[]; expiresAt?: string | null },
) {
  const row = await getToken(db, siteId, id);
  assertManageable(caller, row);
  const scopes = patch.scopes ? parseScopes(patch.scopes, row.kind) : undefined;
  if (scopes) {
    if (caller) assertHeld(caller.scopes, scopes, 'The token');
    assertWithinRole(row, scopes);
  }
  const expiresAt = patch.expiresAt === undefined ? undefined : expiryOf({ expiresAt: patch.expiresAt });
  await repo.updateToken(db, siteId, id, {
    name: patch.name?.trim(),
    description: patch.description,
    scopes: scopes && toJson(scopes),
    expires_at: expiresAt,
    updated_at: now(),
  });
  forgetTokens(id);
  return toToken(await getToken(db, siteId, id));
}

/** New secret, same id, scopes and expiry: the old value stops working at once, everywhere (decisions U4). */
export async function regenerateToken(db: Executor, caller: Caller, siteId: string, id: string, input: { expiresAt?: string | null } = {}) {
  const row = await getToken(db, siteId, id);
  assertManageable(caller, row);
  if (row.revoked_at) throw new AppError('TOKEN_NOT_ACTIVE');
  const expiresAt = input.expiresAt === undefined ? undefined : expiryOf({ expiresAt: input.expiresAt });
  const secret = newSecret();
  const at = now();
  await repo.updateToken(db, siteId, id, { secret_hash: hashSecret(secret), expires_at: expiresAt, regenerated_at: at, updated_at: at });
  forgetTokens(id);
  return { ...toToken(await getToken(db, siteId, id)), token: tokenValue(id, secret) };
}

/** DELETE /api-tokens/:id revokes: the row stays for the list's `status=revoked` until purged. */
export async function deleteSiteToken(db: Executor, caller: Caller, siteId: string, id: string): Promise<void> {
  const row = await getToken(db, siteId, id);
  assertManageable(caller, row);
  if (row.revoked_at) throw new AppError('TOKEN_NOT_ACTIVE');
  const at = now();
  await repo.updateToken(db, siteId, id, { revoked_at: at, updated_at: at });
  forgetTokens(id);
}

/** The CLI: revoke by id alone. */
export async function revokeToken(db: Executor, id: string): Promise<boolean> {
  forgetTokens(id);
  return repo.revokeToken(db, id, now());
}

/** The CLI: regenerate by id alone (the operator names the token; no escalation check). */
export async function regenerateTokenById(db: Executor, id: string) {
  const owner = await repo.findSiteOf(db, id);
  if (!owner) throw notFound('API token');
  return regenerateToken(db, null, owner.site_id, id);
}
