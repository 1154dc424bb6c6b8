import type { FastifyInstance, onRequestAsyncHookHandler, onRequestHookHandler, preValidationAsyncHookHandler, RouteOptions } from 'fastify';
import type { Executor } from '../db/types.js';
import { AppError } from '../shared/errors.js';
import { ID_PATTERN, MAX_ID } from '../shared/schemas.js';
import { isScope, type RouteScope } from '../shared/scopes.js';
import { authHook, siteKeyHook } from './auth.js';
import { cachesRoute, type DeliveryCache, deliveryCacheHooks } from './delivery-cache.js';

const CANONICAL_ID = new RegExp(ID_PATTERN);

const toArray = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/**
 * Only a canonical decimal id in range names a record (decisions H16): `0x10`, `+12`, `012`,
 * ` 12`, `1e1` or an id past 2,147,483,647 would be coerced to a number by the validator
 * (or overflow PostgreSQL's integer); they are simply not found.
 */
function canonicalIds(pathIds: readonly string[], queryIds: readonly string[]): preValidationAsyncHookHandler {
  return async (request) => {
    const params = request.params as Record<string, unknown>;
    for (const name of pathIds) {
      const value = params[name];
      // A positive number written another way is no id (404); text that is no number (`abc`),
      // zero or a negative number is left to the validator: a wrong type or below the minimum (422).
      if (typeof value === 'string' && !CANONICAL_ID.test(value) && value.trim() !== '' && Number(value) >= 1) {
        throw new AppError('NOT_FOUND');
      }
    }
    // In a query (`ids[]=0x10`, `parentId=+3`), a non-canonical id is a mistake to report (422).
    const query = request.query as Record<string, unknown>;
    for (const name of queryIds) {
      const given = query[name];
      const values = Array.isArray(given) ? given : given === undefined ? [] : [given];
      if (values.some((v) => typeof v === 'string' && v !== 'null' && !CANONICAL_ID.test(v))) {
        throw new AppError('VALIDATION_FAILED', {
          message: `${name} must hold ids written in decimal digits, from 1 to ${MAX_ID}`,
          errors: { [name]: [`must be ids written in decimal digits, from 1 to ${MAX_ID}`] },
        });
      }
    }
  };
}

type JsonSchema = { type?: string; maximum?: number; items?: JsonSchema; anyOf?: JsonSchema[] };

/** Whether a schema is an id (`Id()`: an integer up to MAX_ID), a list of them, or either of those or null. */
function isIdSchema(schema: JsonSchema | undefined): boolean {
  if (!schema) return false;
  if (schema.type === 'integer') return schema.maximum === MAX_ID;
  if (schema.type === 'array') return isIdSchema(schema.items);
  return !!schema.anyOf?.some(isIdSchema);
}

export interface RouteInfo {
  method: string;
  url: string;
  scope: string;
  hasParams: boolean;
  hasBody: boolean;
  paramNames: string[];
  /** Scopes some requests also need (config.conditionalScopes); GET /permissions counts them as used. */
  conditionalScopes: string[];
}

const errorRef = (description: string) => ({ description, $ref: 'Error#' });

/**
 * The answers any request may meet whatever its route (decisions HF7, HN3): a dependency that
 * cannot answer now (the database lost or locked, file storage failing or stalled, the server
 * shutting down) is a 503 with `Retry-After`; a full disk where the request writes is a 507.
 */
function documentServiceErrors(route: RouteOptions, schema: Record<string, any>): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const writes = route.config?.writes ?? methods.some((m) => m !== 'GET' && m !== 'HEAD' && m !== 'OPTIONS');
  const responses = (schema.response ??= {}) as Record<string, unknown>;
  responses[503] ??= errorRef(
    '`SERVICE_UNAVAILABLE`: the database or file storage cannot answer now (lost, locked, stalled), or the server is shutting down; nothing was changed. Retry after `Retry-After` seconds.',
  );
  if (writes) responses[507] ??= errorRef('`STORAGE_FULL`: no space is left where this request writes (the database or file storage); nothing of it was kept.');
}

function isApiRoute(url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/');
}

/**
 * The route table's guard (architecture: "One request", step 3). At registration time, every
 * route must declare `config.scope` from the catalog (or 'public'; outside /v1 only 'public'), or
 * the app refuses to start. `undeclaredPublic` names the URL prefixes of routes a plugin adds
 * without a way to declare one (the reference UI at /docs): those are public.
 * The hook also attaches authentication, publishes the scope and the error responses in the
 * OpenAPI document, and records the route for the generated contract tests.
 */
export function registerRouteGuard(
  app: FastifyInstance,
  db: Executor,
  table: RouteInfo[],
  cache: DeliveryCache | null = null,
  undeclaredPublic: readonly string[] = [],
  checkChanges: () => void = () => undefined,
): void {
  const cacheHooks = cache && deliveryCacheHooks(cache);
  /** Authentication first, then (where the route's answers may be cached) the cache's lookup and store. */
  const attach = (route: RouteOptions, scope: RouteScope, hook: onRequestAsyncHookHandler | onRequestHookHandler) => {
    const onRequest = [...toArray(route.onRequest), hook];
    if (cacheHooks && cachesRoute(route, scope)) {
      onRequest.push(cacheHooks.lookup);
      const schema = route.schema as Record<string, any>;
      const who = scope === 'public' ? 'Answers' : "Delivery tokens' answers";
      schema.description = `${schema.description ? `${schema.description}\n\n` : ''}${who} come from the delivery cache with a strong \`ETag\` (\`304\` on \`If-None-Match\`); a write shows in the next read (decisions P18).`;
      route.onSend = [...toArray(route.onSend), cacheHooks.store] as RouteOptions['onSend'];
    }
    route.onRequest = onRequest as RouteOptions['onRequest'];
  };
  app.addHook('onRoute', (route: RouteOptions) => {
    const underPrefix = (prefix: string) => route.url === prefix || route.url.startsWith(`${prefix}/`);
    const scope = route.config?.scope ?? (undeclaredPublic.some(underPrefix) ? 'public' : undefined);
    if (!scope || (scope !== 'public' && !isScope(scope))) {
      throw new Error(`Route ${String(route.method)} ${route.url} declares no valid scope (config.scope)`);
    }
    // Outside /v1 (health, the API document, files at their public URLs): no token, no site key.
    if (!isApiRoute(route.url)) {
      if (scope !== 'public') throw new Error(`Route ${String(route.method)} ${route.url} is outside /v1, so its scope must be 'public'`);
      if (route.schema) (route.schema as Record<string, unknown>).security = [];
      // Of the routes outside /v1 only the files' (a size made on first ask) depends on storage.
      if (route.schema && route.config?.writes) documentServiceErrors(route, route.schema as Record<string, any>);
      return;
    }
    const conditional = route.config?.conditionalScopes ?? [];
    for (const c of conditional) {
      if (!isScope(c.scope)) throw new Error(`Route ${String(route.method)} ${route.url} declares an unknown conditional scope ${c.scope}`);
    }
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    const schema = (route.schema ??= {}) as Record<string, any>;
    const paramNames = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
    for (const method of methods) {
      table.push({
        method,
        url: route.url,
        scope,
        hasParams: paramNames.length > 0,
        hasBody: !!schema.body,
        paramNames,
        conditionalScopes: conditional.map((c) => c.scope),
      });
    }

    const responses = (schema.response ??= {}) as Record<string, unknown>;
    responses[429] ??= errorRef('Rate limit exceeded; see Retry-After');
    documentServiceErrors(route, schema);
    if (schema.body || schema.querystring || schema.params) responses[422] ??= errorRef('Validation failed; `errors` names each field');
    const pathIds = Object.entries((schema.params?.properties ?? {}) as Record<string, JsonSchema>)
      .filter(([, p]) => p.type === 'integer')
      .map(([name]) => name);
    const queryIds = Object.entries((schema.querystring?.properties ?? {}) as Record<string, JsonSchema>)
      .filter(([, p]) => isIdSchema(p))
      .map(([name]) => name);
    if (pathIds.length || queryIds.length) {
      const existingPre = route.preValidation;
      const check = canonicalIds(pathIds, queryIds);
      route.preValidation = existingPre ? [check, ...(Array.isArray(existingPre) ? existingPre : [existingPre])] : [check];
    }
    if (scope === 'public') {
      // A public route without the site key (the tracker scripts) takes no credential at all.
      if (!route.config?.siteKey) {
        schema.security = [];
        return;
      }
      if (!route.url.startsWith('/v1/public/')) throw new Error(`Route ${String(route.method)} ${route.url}: site-key routes live under /v1/public/`);
      responses[401] ??= errorRef('Missing or unknown site key');
      schema.security = [{ siteKey: [] }, { siteKeyQuery: [] }];
      attach(route, scope, siteKeyHook(db));
      return;
    }

    responses[401] ??= errorRef('Missing, malformed, unknown, revoked or expired token');
    responses[403] ??= errorRef(`The token lacks the scope \`${scope}\``);
    if (paramNames.length) responses[404] ??= errorRef("Not found (or another site's record)");
    schema['x-scope'] = scope;
    schema.security = [{ bearerAuth: [] }];
    const also = conditional.map((c) => ` Also \`${c.scope}\` (or \`${c.scope}.own\` on your own records) ${c.when}.`).join('');
    schema.description = `${schema.description ? `${schema.description}\n\n` : ''}Requires scope \`${scope}\`.${also}`;
    if (conditional.length) schema['x-conditional-scopes'] = conditional;

    attach(route, scope, authHook(db, scope, checkChanges, { deliveryOpen: route.config?.deliveryOpen, managementOnly: route.config?.managementOnly }));
  });
}
