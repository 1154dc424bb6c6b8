import { createHash, hash, timingSafeEqual } from 'node:crypto';
import type { Executor } from '../../db/types.js';
import { parseJson } from '../../db/json.js';
import { AppError } from '../../shared/errors.js';
import * as repo from './api-tokens.repository.js';

export type TokenKind = 'management' | 'delivery';

/**
 * Token format: `cairn_<token id, 32 hex>_<secret, 43 base64url>`. The id finds the row by
 * primary key; only a SHA-256 of the secret is stored, compared in constant time. Once a token
 * has verified, its row is kept in this process for a few seconds (verifyCachedToken).
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

/**
 * Token rows (with their user's activity and role) are kept for a few seconds, so a burst of
 * requests costs one lookup. A change in this process forgets the row at once (forgetTokens);
 * a change by another process too: PostgreSQL announces it (triggers of migrations 0013 and
 * 0026), and on SQLite `checkChanges` (PRAGMA data_version) runs before a cached row is used.
 * The secret is still hashed and compared on every request, expiry checked against the clock.
 * What a request needs from the row (the stored hash as bytes, the expiry as a number, the
 * verified token) is computed once per row, not per request (issue 37).
 */
const VERIFIED_TTL_MS = 5_000;
const MAX_CACHED_TOKENS = 10_000;
interface CachedToken {
  id: string;
  /** SHA-256 of the secret, as stored. */
  hash: Buffer;
  /** Revoked, or its user inactive: as good as revoked (decisions U3). */
  revoked: boolean;
  expiresAt: number;
  token: VerifiedToken;
  /** The row is used until then, then read again. */
  until: number;
  touchedAt: number;
}
/** By the token id as written in the token (32 hex digits): no uuid is built to find it. */
const cachedTokens = new Map<string, CachedToken>();
/** Moves on with every forgetTokens: a row read before a change is not kept after it. */
let generation = 0;

/**
 * Token ids verified in this process (not forgotten since). The rate limiter looks a token up in
 * the database only when its id is one of these or its client's address has not used up its
 * budget of failures: a flood of made-up tokens costs no queries (decisions H21).
 */
const verifiedIds = new Set<string>();

async function loadToken(db: Executor, hexId: string): Promise<CachedToken | undefined> {
  const seen = generation;
  const row = await repo.findTokenForAuth(db, uuidFromHex(hexId));
  // Unknown ids are not kept: a flood of made-up ids must not fill the map.
  if (!row) return undefined;
  const entry: CachedToken = {
    id: row.id,
    hash: Buffer.from(row.secret_hash, 'hex'),
    revoked: !!row.revoked_at || !row.user_is_active,
    expiresAt: row.expires_at ? Date.parse(row.expires_at) : Number.POSITIVE_INFINITY,
    token: Object.freeze({
      tokenId: row.id,
      siteId: row.site_id,
      userId: row.user_id,
      kind: row.kind,
      scopes: effectiveScopes(row.scopes, row.role_scopes, Boolean(row.role_is_system)),
    }),
    until: Date.now() + VERIFIED_TTL_MS,
    touchedAt: cachedTokens.get(hexId)?.touchedAt ?? 0,
  };
  if (seen !== generation) return entry;
  if (cachedTokens.size >= MAX_CACHED_TOKENS) cachedTokens.clear();
  cachedTokens.set(hexId, entry);
  return entry;
}

/**
 * Forgets a token's cached row, or every cached row (no id, or `*`: a role or a user changed),
 * because this or another process changed it (decisions H23, U3).
 */
export function forgetTokens(tokenId?: string): void {
  generation++;
  if (tokenId && tokenId !== '*') {
    const hexId = tokenId.replaceAll('-', '');
    cachedTokens.delete(hexId);
    verifiedIds.delete(hexId);
  } else {
    cachedTokens.clear();
    verifiedIds.clear();
  }
}

const noCheck = () => undefined;

/** The verified token, or the AppError of a token that does not verify against this row. */
function check(db: Executor, entry: CachedToken | undefined, hexId: string, secret: string): VerifiedToken | AppError {
  // One-shot: no Hash object per request (issue 37).
  const given = hash('sha256', secret, 'buffer');
  if (!entry || entry.hash.length !== given.length || !timingSafeEqual(entry.hash, given)) return new AppError('UNAUTHORIZED');
  const at = Date.now();
  if (entry.revoked || entry.expiresAt <= at) {
    verifiedIds.delete(hexId);
    return new AppError(entry.revoked ? 'TOKEN_REVOKED' : 'TOKEN_EXPIRED');
  }
  if (!verifiedIds.has(hexId)) {
    if (verifiedIds.size >= MAX_CACHED_TOKENS) verifiedIds.clear();
    verifiedIds.add(hexId);
  }
  if (entry.touchedAt + TOUCH_INTERVAL_MS < at) {
    entry.touchedAt = at;
    repo.touchToken(db, entry.id, new Date(at).toISOString()).catch(() => (entry.touchedAt = 0));
  }
  return entry.token;
}

/**
 * A bearer string checked against the cached row when there is a fresh one (no promise, no
 * query): the verified token, the AppError (401) of one that does not verify, or null when the
 * row must be read first (verifyToken).
 */
export function verifyCachedToken(db: Executor, raw: string, checkChanges: () => void = noCheck): VerifiedToken | AppError | null {
  const m = TOKEN_PATTERN.exec(raw);
  if (!m) return new AppError('UNAUTHORIZED');
  checkChanges();
  const entry = cachedTokens.get(m[1]!);
  if (!entry || entry.until <= Date.now()) return null;
  return check(db, entry, m[1]!, m[2]!);
}

/** Whether this token's id verified here before (and was not forgotten since). */
export function verifiedBefore(raw: string): boolean {
  const m = TOKEN_PATTERN.exec(raw);
  return !!m && verifiedIds.has(m[1]!);
}

export async function verifyToken(db: Executor, raw: string, checkChanges: () => void = noCheck): Promise<VerifiedToken> {
  let result = verifyCachedToken(db, raw, checkChanges);
  if (result === null) {
    const [, hexId, secret] = TOKEN_PATTERN.exec(raw)!;
    result = check(db, await loadToken(db, hexId!), hexId!, secret!);
  }
  if (result instanceof AppError) throw result;
  return result;
}
