import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestAsyncHookHandler, onRequestHookHandler } from 'fastify';
import type { Executor } from '../db/types.js';
import { AppError } from '../shared/errors.js';
import { accessFor, type Access, type RouteScope, type Scope, isDeliveryScope } from '../shared/scopes.js';
import { verifyToken, type TokenKind, type VerifiedToken } from '../modules/api-tokens/api-tokens.auth.js';

/** Who is calling, set on every authenticated request (architecture: "One request", step 2). */
export interface AuthContext {
  siteId: string;
  userId: string;
  tokenId: string;
  kind: TokenKind;
  scopes: ReadonlySet<string>;
  /** 'own' when the route's scope is granted only through its `.own` twin (decisions G12). */
  access: Access;
}

/** The site a public request names by its site key (decisions G19), and the origins its browsers use. */
export interface PublicSite {
  siteId: string;
  origins: readonly string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
    /**
     * The bearer token as the rate limiter verified it (it counts by token), for the auth hook
     * to use instead of verifying it again: the token, or why it does not verify. Null when the
     * limiter did not verify it (a public route, an address past its budget of failures).
     */
    verifiedToken: VerifiedToken | AppError | null;
    /** Set on `/v1/public/...` routes from the site key (`config.siteKey`). */
    publicSite: PublicSite;
  }
  interface FastifyContextConfig {
    /** The scope this route requires, or 'public'. Every /v1 route must declare one. */
    scope?: RouteScope;
    /**
     * Scopes some requests of this route also need, depending on what they change (decisions G12),
     * checked by `requireScope` where the service knows; declared here so the route table
     * validates them at start-up and the OpenAPI document lists them.
     */
    conditionalScopes?: ReadonlyArray<{ scope: Scope; when: string }>;
    /** A public route that names its site by the site key (decisions G19). */
    siteKey?: boolean;
    /**
     * Whether a request writes (to the database or file storage) before it answers, so may meet a
     * full disk: the OpenAPI document lists 507 `STORAGE_FULL` for it (decisions HF7). Default:
     * every method but GET (even the analytics collector, which queues its events, stores the
     * day's salt on a site's first batch of the day). A GET that makes something once (a file's
     * size on first ask) says true.
     */
    writes?: boolean;
    /**
     * Delivery tokens of the site may call this read route whatever their scopes: it shows
     * nothing more than its public twin shows with the (not secret) site key, e.g. redirect
     * resolution (decisions R2).
     */
    deliveryOpen?: boolean;
    /**
     * A read route of a content group that shows what delivery tokens must not see (revision
     * history, translation status, settings): delivery tokens get a 403 whatever their scopes.
     */
    managementOnly?: boolean;
  }
}

const READ_METHODS = new Set(['GET', 'HEAD']);

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/**
 * Authentication and scope check in one onRequest hook: 401 for a missing, malformed, unknown,
 * revoked or expired token or an inactive user's; scopes are the token's effective ones (its own
 * ∩ its user's role, decisions U3); `checkChanges` lets SQLite see another process's commits
 * before a cached token is trusted; 403 for a missing scope or a delivery token on a write, decided
 * before the body is parsed or any record is looked up. The token the rate limiter verified for
 * this request is used as it is (request.verifiedToken); a cached one costs no promise at all.
 */
export function authHook(
  db: Executor,
  scope: Exclude<RouteScope, 'public'>,
  checkChanges?: () => void,
  /** The route's own flags, read once when the route is added (`request.routeOptions` builds a new object on every read). */
  route: { deliveryOpen?: boolean; managementOnly?: boolean } = {},
): onRequestHookHandler {
  const deliveryOpen = !!route.deliveryOpen;
  const managementOnly = !!route.managementOnly;
  // One answer per token and access, made once: the request's auth context is shared and frozen.
  const contexts = new WeakMap<VerifiedToken, Partial<Record<Access, AuthContext>>>();
  const authorize = (request: FastifyRequest, token: VerifiedToken): void => {
    if (token.kind === 'delivery' && !READ_METHODS.has(request.method)) throw new AppError('READ_ONLY_TOKEN');
    let access: Access | null;
    // Delivery tokens read the content groups only, whatever scopes an older token row holds (decisions G13).
    if (token.kind === 'delivery' && deliveryOpen) access = 'all';
    else if (token.kind === 'delivery' && (!isDeliveryScope(scope) || managementOnly)) {
      throw new AppError('MISSING_SCOPE', { message: `Delivery tokens cannot use this endpoint (scope "${scope}"): they read published content only.` });
    } else access = accessFor(token.scopes, scope);
    if (!access) throw new AppError('MISSING_SCOPE', { message: `This endpoint requires the scope "${scope}".` });
    let byAccess = contexts.get(token);
    if (!byAccess) contexts.set(token, (byAccess = {}));
    request.auth = byAccess[access] ??= Object.freeze({ ...token, access });
  };
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
    const verified = request.verifiedToken;
    try {
      if (verified instanceof AppError) throw verified;
      if (verified) {
        authorize(request, verified);
        return done();
      }
      const raw = bearerToken(request.headers.authorization);
      if (!raw) throw new AppError('UNAUTHORIZED');
      verifyToken(db, raw, checkChanges).then(
        (token) => {
          try {
            authorize(request, token);
            done();
          } catch (err) {
            done(err as Error);
          }
        },
        (err: Error) => done(err),
      );
    } catch (err) {
      done(err as Error);
    }
  };
}

/**
 * A scope a request needs beyond its route's, decided by what it changes (decisions G12): the
 * plain scope, or its `.own` twin when the record's author (`ownerId`) is the token's user. With
 * the route guard above, the one place scopes are checked; the route declares it in
 * `config.conditionalScopes`.
 */
export function requireScope(auth: Pick<AuthContext, 'scopes' | 'userId'>, scope: Scope, ownerId: string | null, what: string): void {
  const access = accessFor(auth.scopes, scope);
  if (access === 'all' || (access === 'own' && ownerId === auth.userId)) return;
  throw new AppError('MISSING_SCOPE', {
    message: `${what} needs the scope "${scope}"${access === 'own' ? ' (your .own scope covers only your own records)' : ''}.`,
  });
}

const SITE_KEY_TTL_MS = 30_000;
const SITE_KEY_CACHE_MAX = 10_000;
const siteKeys = new Map<string, { site: PublicSite | null; at: number }>();

function originOf(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

async function lookUpSiteKey(db: Executor, key: string): Promise<PublicSite | null> {
  const cached = siteKeys.get(key);
  if (cached && Date.now() - cached.at < SITE_KEY_TTL_MS) return cached.site;
  const row = await db.selectFrom('sites').select(['id', 'domain', 'preview_url']).where('public_key', '=', key).executeTakeFirst();
  const site = row
    ? { siteId: row.id, origins: [`https://${row.domain}`, `http://${row.domain}`, originOf(row.preview_url)].filter((o): o is string => !!o) }
    : null;
  // Unknown keys are remembered too, so guessing costs no query; the map is bounded.
  if (siteKeys.size >= SITE_KEY_CACHE_MAX) siteKeys.delete(siteKeys.keys().next().value!);
  siteKeys.set(key, { site, at: Date.now() });
  return site;
}

const SITE_KEY_PATTERN = /^pk_[A-Za-z0-9_-]{24,64}$/;

/**
 * Public routes (decisions G14, G19): the site is named by its public key, in `X-Site-Key` or
 * `?siteKey=` (beacons cannot set headers); a missing or unknown key is a 401. A browser of the
 * site's own domain (or preview origin) may read the answer (CORS); others may not.
 */
export function siteKeyHook(db: Executor): onRequestAsyncHookHandler {
  return async function identifySite(request: FastifyRequest, reply: FastifyReply) {
    const header = request.headers['x-site-key'];
    const fromQuery = (request.query as Record<string, unknown> | undefined)?.siteKey;
    const key = typeof header === 'string' ? header : typeof fromQuery === 'string' ? fromQuery : '';
    const site = SITE_KEY_PATTERN.test(key) ? await lookUpSiteKey(db, key) : null;
    if (!site) throw new AppError('SITE_KEY_INVALID');
    request.publicSite = site;
    const origin = request.headers.origin;
    reply.header('vary', 'Origin');
    if (origin && site.origins.includes(origin)) reply.header('access-control-allow-origin', origin);
  };
}
