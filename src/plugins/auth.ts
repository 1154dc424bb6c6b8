import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Executor } from '../db/types.js';
import { AppError } from '../shared/errors.js';
import { accessFor, type Access, type RouteScope, type Scope, isDeliveryScope } from '../shared/scopes.js';
import { verifyToken, type TokenKind } from '../modules/api-tokens/api-tokens.service.js';

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

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
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
 * revoked or expired token; 403 for a missing scope or a delivery token on a write, decided
 * before the body is parsed or any record is looked up.
 */
export function authHook(db: Executor, scope: Exclude<RouteScope, 'public'>): onRequestAsyncHookHandler {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply) {
    const raw = bearerToken(request.headers.authorization);
    if (!raw) throw new AppError('UNAUTHORIZED');
    const token = await verifyToken(db, raw);
    if (token.kind === 'delivery' && !READ_METHODS.has(request.method)) throw new AppError('READ_ONLY_TOKEN');
    // Delivery tokens read the content groups only, whatever scopes an older token row holds (decisions G13).
    if (token.kind === 'delivery' && !isDeliveryScope(scope)) {
      throw new AppError('MISSING_SCOPE', { message: `Delivery tokens cannot use this endpoint (scope "${scope}"): they read published content only.` });
    }
    const access = accessFor(token.scopes, scope);
    if (!access) {
      throw new AppError('MISSING_SCOPE', { message: `This endpoint requires the scope "${scope}".` });
    }
    request.auth = { ...token, access };
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
