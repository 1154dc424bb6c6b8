import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Executor } from '../../db/types.js';
import { now, parseJson, toJson } from '../../db/json.js';
import { ALL_SCOPES, isDeliveryScope, isScope, type Scope } from '../../shared/scopes.js';
import { AppError } from '../../shared/errors.js';
import * as repo from './api-tokens.repository.js';

export type TokenKind = 'management' | 'delivery';

/**
 * Token format: `cairn_<token id, 32 hex>_<secret, 43 base64url>`. The id finds the row by
 * primary key; only a SHA-256 of the secret is stored, compared in constant time. Once a token
 * has verified, the rate limiter counts by its id without a database lookup (knownTokenId).
 */
const TOKEN_PATTERN = /^cairn_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;

function uuidFromHex(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

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
  const unknown = list.filter((s) => !isScope(s));
  if (unknown.length)
    throw new AppError('VALIDATION_FAILED', { message: `Unknown scopes: ${unknown.join(', ')}`, errors: { scopes: unknown.map((s) => `unknown scope ${s}`) } });
  const scopes = [...new Set(list)] as Scope[];
  // A delivery token keeps only the content groups' read scopes (decisions G13).
  return kind === 'delivery' ? scopes.filter(isDeliveryScope) : scopes;
}

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

export async function createToken(
  db: Executor,
  input: {
    siteId: string;
    userId: string;
    name?: string;
    kind?: TokenKind;
    scopes: string | readonly string[];
    expiresAt?: string | null;
  },
): Promise<CreatedToken> {
  const kind = input.kind ?? 'management';
  const scopes = parseScopes(input.scopes, kind);
  const id = randomUUID();
  const secret = randomBytes(32).toString('base64url');
  const createdAt = now();
  const name = input.name?.trim() || `${kind} token`;
  await repo.insertToken(db, {
    id,
    site_id: input.siteId,
    user_id: input.userId,
    name,
    kind,
    secret_hash: hashSecret(secret),
    scopes: toJson(scopes),
    expires_at: input.expiresAt ?? null,
    created_at: createdAt,
  });
  return {
    id,
    siteId: input.siteId,
    userId: input.userId,
    name,
    kind,
    scopes,
    expiresAt: input.expiresAt ?? null,
    createdAt,
    token: `cairn_${id.replace(/-/g, '')}_${secret}`,
  };
}

export interface VerifiedToken {
  tokenId: string;
  siteId: string;
  userId: string;
  kind: TokenKind;
  scopes: ReadonlySet<string>;
}

// Tokens share a few scope lists (often "all": 200+ scopes); parse each list once, not per request.
const scopeSets = new Map<string, ReadonlySet<string>>();
function scopeSet(raw: unknown): ReadonlySet<string> {
  const key = typeof raw === 'string' ? raw : JSON.stringify(raw);
  let set = scopeSets.get(key);
  if (!set) {
    if (scopeSets.size > 1000) scopeSets.clear();
    set = new Set(parseJson<string[]>(raw, []));
    scopeSets.set(key, set);
  }
  return set;
}

// last_used_at is written at most once a minute per token, off the request path.
const TOUCH_INTERVAL_MS = 60_000;
const lastTouched = new Map<string, number>();

/**
 * Token rows are kept for a few seconds, so a burst of requests costs one lookup: revoking in
 * this process takes effect at once (revokeToken forgets the row), and so does a revocation by
 * another process (the CLI, another instance): the database announces it (forgetTokens). The secret is still hashed and
 * compared on every request, and expiry is checked against the clock every time.
 */
const VERIFIED_TTL_MS = 5_000;
type TokenRow = NonNullable<Awaited<ReturnType<typeof repo.findTokenById>>>;
const tokenRows = new Map<string, { row: TokenRow | undefined; until: number }>();

async function tokenRow(db: Executor, id: string): Promise<TokenRow | undefined> {
  const now = Date.now();
  const cached = tokenRows.get(id);
  if (cached && cached.until > now) return cached.row;
  const row = await repo.findTokenById(db, id);
  if (tokenRows.size >= 10_000) tokenRows.clear();
  // Unknown ids are not kept: a flood of made-up ids must not fill the map.
  if (row) tokenRows.set(id, { row, until: now + VERIFIED_TTL_MS });
  return row;
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

/** Forgets a token's cached row (or every cached row): another process changed it (decisions H23). */
export function forgetTokens(tokenId?: string): void {
  if (tokenId) {
    tokenRows.delete(tokenId);
    verifiedSecrets.delete(tokenId);
  } else {
    tokenRows.clear();
    verifiedSecrets.clear();
  }
}

export async function verifyToken(db: Executor, raw: string): Promise<VerifiedToken> {
  const m = TOKEN_PATTERN.exec(raw);
  if (!m) throw new AppError('UNAUTHORIZED');
  const id = uuidFromHex(m[1]!);
  const row = await tokenRow(db, id);
  const given = Buffer.from(hashSecret(m[2]!), 'hex');
  const stored = Buffer.from(row?.secret_hash ?? '0'.repeat(64), 'hex');
  if (!row || stored.length !== given.length || !timingSafeEqual(stored, given)) throw new AppError('UNAUTHORIZED');
  const at = Date.now();
  if (row.revoked_at || (row.expires_at && Date.parse(row.expires_at) <= at)) {
    verifiedSecrets.delete(id);
    throw new AppError(row.revoked_at ? 'TOKEN_REVOKED' : 'TOKEN_EXPIRED');
  }
  if (!verifiedSecrets.has(id)) {
    if (verifiedSecrets.size >= 10_000) verifiedSecrets.clear();
    verifiedSecrets.set(id, stored);
  }
  if ((lastTouched.get(id) ?? 0) + TOUCH_INTERVAL_MS < at) {
    lastTouched.set(id, at);
    repo.touchToken(db, id, new Date(at).toISOString()).catch(() => lastTouched.delete(id));
  }
  return {
    tokenId: row.id,
    siteId: row.site_id,
    userId: row.user_id,
    kind: row.kind,
    scopes: scopeSet(row.scopes),
  };
}

export async function listTokens(db: Executor, siteId: string) {
  const rows = await repo.listTokens(db, siteId);
  return rows.map((r) => ({
    id: r.id,
    siteId: r.site_id,
    userId: r.user_id,
    name: r.name,
    kind: r.kind,
    scopes: parseJson<string[]>(r.scopes, []),
    lastUsedAt: r.last_used_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    createdAt: r.created_at,
  }));
}

export async function revokeToken(db: Executor, id: string): Promise<boolean> {
  tokenRows.delete(id);
  verifiedSecrets.delete(id);
  return repo.revokeToken(db, id, now());
}
