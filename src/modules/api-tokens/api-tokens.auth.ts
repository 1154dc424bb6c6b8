import { createHash, timingSafeEqual } from 'node:crypto';
import type { Executor } from '../../db/types.js';
import { parseJson } from '../../db/json.js';
import { AppError } from '../../shared/errors.js';
import * as repo from './api-tokens.repository.js';

export type TokenKind = 'management' | 'delivery';

/**
 * Token format: `cairn_<token id, 32 hex>_<secret, 43 base64url>`. The id finds the row by
 * primary key; only a SHA-256 of the secret is stored, compared in constant time. Once a token
 * has verified, the rate limiter counts by its id without a database lookup (knownTokenId).
 */
export const TOKEN_PATTERN = /^cairn_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;

export function uuidFromHex(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export interface VerifiedToken {
  tokenId: string;
  siteId: string;
  userId: string;
  kind: TokenKind;
  /** What the token may do: its own scopes ∩ its user's role scopes (decisions U3). */
  scopes: ReadonlySet<string>;
}

const rawKey = (raw: unknown) => (typeof raw === 'string' ? raw : JSON.stringify(raw));

/**
 * Effective scope sets, one per (token scopes, role scopes) pair: tokens share a few scope lists
 * and users a few roles, so each intersection is parsed and computed once, not per request.
 * The owner role (system) holds every scope, present and future: its tokens keep their own list.
 */
const effectiveSets = new Map<string, ReadonlySet<string>>();
export function effectiveScopes(tokenScopes: unknown, roleScopes: unknown, roleIsSystem: boolean): ReadonlySet<string> {
  const key = roleIsSystem ? rawKey(tokenScopes) : `${rawKey(tokenScopes)}\u0000${rawKey(roleScopes)}`;
  let set = effectiveSets.get(key);
  if (!set) {
    if (effectiveSets.size > 1000) effectiveSets.clear();
    const own = parseJson<string[]>(tokenScopes, []);
    const role = roleIsSystem ? null : new Set(parseJson<string[]>(roleScopes, []));
    set = new Set(role ? own.filter((s) => role.has(s)) : own);
    effectiveSets.set(key, set);
  }
  return set;
}

// last_used_at is written at most once a minute per token, off the request path.
const TOUCH_INTERVAL_MS = 60_000;
const lastTouched = new Map<string, number>();

/**
 * Token rows (with their user's activity and role) are kept for a few seconds, so a burst of
 * requests costs one lookup. A change in this process forgets the row at once (forgetTokens);
 * a change by another process too: PostgreSQL announces it (triggers of migrations 0013 and
 * 0026), and on SQLite `checkChanges` (PRAGMA data_version) runs before a cached row is used.
 * The secret is still hashed and compared on every request, expiry checked against the clock.
 */
const VERIFIED_TTL_MS = 5_000;
type TokenRow = NonNullable<Awaited<ReturnType<typeof repo.findTokenForAuth>>>;
const tokenRows = new Map<string, { row: TokenRow | undefined; scopes: ReadonlySet<string>; until: number }>();

async function tokenRow(db: Executor, id: string, checkChanges: () => void) {
  const now = Date.now();
  checkChanges();
  const cached = tokenRows.get(id);
  if (cached && cached.until > now) return cached;
  const row = await repo.findTokenForAuth(db, id);
  if (!row) return undefined;
  if (tokenRows.size >= 10_000) tokenRows.clear();
  // Unknown ids are not kept: a flood of made-up ids must not fill the map.
  const entry = { row, scopes: effectiveScopes(row.scopes, row.role_scopes, Boolean(row.role_is_system)), until: now + VERIFIED_TTL_MS };
  tokenRows.set(id, entry);
  return entry;
}

/**
 * Tokens verified in this process: id -> stored secret hash. The rate limiter counts a request
 * against its token only when the token matches one of these; any other bearer string (made up,
 * unknown, revoked, or not yet seen here) counts against the client's address (decisions H21).
 */
const verifiedSecrets = new Map<string, Buffer>();

/** The token's id when this exact token has been verified here and not revoked since; else null. */
export function knownTokenId(raw: string): string | null {
  const m = TOKEN_PATTERN.exec(raw);
  if (!m) return null;
  const id = uuidFromHex(m[1]!);
  const stored = verifiedSecrets.get(id);
  return stored && timingSafeEqual(stored, Buffer.from(hashSecret(m[2]!), 'hex')) ? id : null;
}

/**
 * Forgets a token's cached row, or every cached row (no id, or `*`: a role or a user changed),
 * because this or another process changed it (decisions H23, U3).
 */
export function forgetTokens(tokenId?: string): void {
  if (tokenId && tokenId !== '*') {
    tokenRows.delete(tokenId);
    verifiedSecrets.delete(tokenId);
  } else {
    tokenRows.clear();
    verifiedSecrets.clear();
  }
}

const noCheck = () => undefined;

export async function verifyToken(db: Executor, raw: string, checkChanges: () => void = noCheck): Promise<VerifiedToken> {
  const m = TOKEN_PATTERN.exec(raw);
  if (!m) throw new AppError('UNAUTHORIZED');
  const id = uuidFromHex(m[1]!);
  const entry = await tokenRow(db, id, checkChanges);
  const row = entry?.row;
  const given = Buffer.from(hashSecret(m[2]!), 'hex');
  const stored = Buffer.from(row?.secret_hash ?? '0'.repeat(64), 'hex');
  if (!row || stored.length !== given.length || !timingSafeEqual(stored, given)) throw new AppError('UNAUTHORIZED');
  const at = Date.now();
  // An inactive user's tokens are as good as revoked (decisions U3).
  const revoked = !!row.revoked_at || !row.user_is_active;
  if (revoked || (row.expires_at && Date.parse(row.expires_at) <= at)) {
    verifiedSecrets.delete(id);
    throw new AppError(revoked ? 'TOKEN_REVOKED' : 'TOKEN_EXPIRED');
  }
  if (!verifiedSecrets.has(id)) {
    if (verifiedSecrets.size >= 10_000) verifiedSecrets.clear();
    verifiedSecrets.set(id, stored);
  }
  if ((lastTouched.get(id) ?? 0) + TOUCH_INTERVAL_MS < at) {
    lastTouched.set(id, at);
    repo.touchToken(db, id, new Date(at).toISOString()).catch(() => lastTouched.delete(id));
  }
  return { tokenId: row.id, siteId: row.site_id, userId: row.user_id, kind: row.kind, scopes: entry.scopes };
}
