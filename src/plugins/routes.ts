import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Executor } from '../db/types.js';
import { isScope } from '../shared/scopes.js';
import { authHook } from './auth.js';

export interface RouteInfo {
  method: string;
  url: string;
  scope: string;
  hasParams: boolean;
  hasBody: boolean;
  paramNames: string[];
}

const errorRef = (description: string) => ({ description, $ref: 'Error#' });

function isApiRoute(url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/');
}

/**
 * The route table's guard (architecture: "One request", step 3). At registration time, every /v1
 * route must declare `config.scope` from the catalog (or 'public'), or the app refuses to start.
 * The hook also attaches authentication, publishes the scope and the error responses in the
 * OpenAPI document, and records the route for the generated contract tests.
 */
export function registerRouteGuard(app: FastifyInstance, db: Executor, table: RouteInfo[]): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!isApiRoute(route.url)) return;
    const scope = route.config?.scope;
    if (!scope || (scope !== 'public' && !isScope(scope))) {
      throw new Error(`Route ${String(route.method)} ${route.url} declares no valid scope (config.scope)`);
    }
    const conditional = route.config?.conditionalScopes ?? [];
    for (const c of conditional) {
      if (!isScope(c.scope)) throw new Error(`Route ${String(route.method)} ${route.url} declares an unknown conditional scope ${c.scope}`);
    }
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    const schema = (route.schema ??= {}) as Record<string, any>;
    const paramNames = [...route.url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
    for (const method of methods) {
      table.push({ method, url: route.url, scope, hasParams: paramNames.length > 0, hasBody: !!schema.body, paramNames });
    }

    const responses = (schema.response ??= {}) as Record<string, unknown>;
    responses[429] ??= errorRef('Rate limit exceeded; see Retry-After');
    if (schema.body || schema.querystring || schema.params) responses[422] ??= errorRef('Validation failed; `errors` names each field');
    if (scope === 'public') return;

    responses[401] ??= errorRef('Missing, malformed, unknown, revoked or expired token');
    responses[403] ??= errorRef(`The token lacks the scope \`${scope}\``);
    if (paramNames.length) responses[404] ??= errorRef("Not found (or another site's record)");
    schema['x-scope'] = scope;
    schema.security = [{ bearerAuth: [] }];
    const also = conditional.map((c) => ` Also \`${c.scope}\` (or \`${c.scope}.own\` on your own records) ${c.when}.`).join('');
    schema.description = `${schema.description ? `${schema.description}\n\n` : ''}Requires scope \`${scope}\`.${also}`;
    if (conditional.length) schema['x-conditional-scopes'] = conditional;

    const hook = authHook(db, scope);
    const existing = route.onRequest;
    route.onRequest = existing ? [...(Array.isArray(existing) ? existing : [existing]), hook] : [hook];
  });
}
