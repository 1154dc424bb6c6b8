import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allScopesExcept, buildTestApp, createSiteWithToken, type TestContext } from '../helpers/app.js';
import { client, expectErrorShape } from '../helpers/http.js';
import { fillPath, seedFor } from './seeds.js';
import type { RouteInfo } from '../../src/plugins/routes.js';

/**
 * Contract tests generated from the route table (issue 2, item 12): every /v1 route answers 401
 * without a token and 403 without its scope; every route with a path parameter answers 404 for
 * another site's record. New modules are covered without new hand-written cases.
 */
let ctx: TestContext;
let routes: RouteInfo[];

beforeAll(async () => {
  ctx = await buildTestApp();
  routes = ctx.app.routeTable.filter((r) => r.scope !== 'public');
});
afterAll(() => ctx.close());

function sampleUrl(route: RouteInfo): string {
  return fillPath(route.url, Object.fromEntries(route.paramNames.map((p) => [p, p === 'id' ? 1 : 'x'])));
}

describe('contract: every /v1 route', () => {
  it('has routes to check, each with a catalog scope', () => {
    expect(routes.length).toBeGreaterThan(10);
    for (const r of routes) expect(r.scope).toMatch(/^[a-z_]+(\.[a-z_]+)+$/);
  });

  it('answers 401 without a token, with a malformed token and with an unknown token', async () => {
    const anonymous = client(ctx.app);
    const malformed = client(ctx.app, 'not-a-token');
    const unknown = client(ctx.app, `cairn_${'0'.repeat(32)}_${'A'.repeat(43)}`);
    for (const route of routes) {
      for (const api of [anonymous, malformed, unknown]) {
        const res = await api.call(route.method as any, sampleUrl(route), route.hasBody ? {} : undefined);
        expect(res.status, `${route.method} ${route.url}`).toBe(401);
        expectErrorShape(res.body, 401);
      }
    }
  });

  it('answers 403 when the token lacks the route scope, before anything else', async () => {
    const fixture = await createSiteWithToken(ctx.app);
    const byScope = new Map<string, ReturnType<typeof client>>();
    for (const route of routes) {
      if (!byScope.has(route.scope)) {
        const { token } = await createSiteWithToken(ctx.app, { scopes: allScopesExcept(route.scope) });
        byScope.set(route.scope, client(ctx.app, token));
      }
      const res = await byScope.get(route.scope)!.call(route.method as any, sampleUrl(route), route.hasBody ? {} : undefined);
      expect(res.status, `${route.method} ${route.url}`).toBe(403);
      expectErrorShape(res.body, 403, 'MISSING_SCOPE');
      expect(res.body.message).toContain(route.scope);
    }
    expect(fixture.token).toBeTruthy();
  });

  it("answers 404 for another site's record on every route with a path parameter", async () => {
    const siteA = await createSiteWithToken(ctx.app);
    const siteB = await createSiteWithToken(ctx.app);
    const a = client(ctx.app, siteA.token);
    const b = client(ctx.app, siteB.token);
    const withParams = routes.filter((r) => r.hasParams);
    for (const route of withParams) {
      const seed = seedFor(route.url);
      expect(seed, `no contract seed for ${route.method} ${route.url} (add one in test/contract/seeds.ts)`).toBeDefined();
      const seeded = await seed!(b, route);
      const url = fillPath(route.url, seeded.params);
      // The owner sees it (so the 404 below is about tenancy, not a bad seed) ...
      if (route.method === 'GET') {
        const own = await b.get(url);
        expect(own.status, `site B reading its own ${url}`).toBe(200);
      }
      // ... and another site's token gets exactly the 404 of a record that does not exist.
      const res = await a.call(route.method as any, url, route.hasBody ? (seeded.body ?? {}) : undefined);
      expect(res.status, `${route.method} ${route.url} across sites`).toBe(404);
      expectErrorShape(res.body, 404);
    }
  });

  it('publishes every route with its scope and error responses in /openapi.json', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    for (const route of ctx.app.routeTable) {
      const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
      const op = doc.paths[path]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${path} in OpenAPI`).toBeDefined();
      expect(op.responses['429']).toBeDefined();
      if (route.scope === 'public') continue;
      expect(op['x-scope']).toBe(route.scope);
      expect(op.description).toContain(route.scope);
      expect(op.responses['401']).toBeDefined();
      expect(op.responses['403']).toBeDefined();
      if (route.hasParams) expect(op.responses['404']).toBeDefined();
      if (route.hasBody) expect(op.responses['422']).toBeDefined();
    }
  });

  it('lists 503 on every route and 507 on every route that writes, with the G3 body (decisions HF7, HN3)', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    // The reads that write first: the redirect reads flush buffered hit counts, a file's size is made on first ask.
    const writingReads = [
      'GET /v1/redirects',
      'GET /v1/redirects/{id}',
      'GET /v1/redirects/stats',
      'GET /v1/redirects/not-found',
      'GET /v1/redirects/{id}/logs',
      'GET /files/{siteId}/{id}/{filename}',
    ];
    const operations = ctx.app.routeTable.map((r) => `${r.method} ${r.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
    const writing = [...operations.filter((op) => !op.startsWith('GET ')), ...writingReads];
    expect(writing.length).toBeGreaterThan(100);
    const missing: string[] = [];
    for (const op of [...new Set([...operations, ...writing])]) {
      const [method, path] = op.split(' ') as [string, string];
      const responses = doc.paths[path]?.[method.toLowerCase()]?.responses ?? {};
      const expected = writing.includes(op) ? ['503', '507'] : ['503'];
      for (const status of expected) {
        if (responses[status]?.content?.['application/json']?.schema?.$ref !== '#/components/schemas/Error') missing.push(`${op} ${status}`);
      }
      // A read that writes nothing has no 507 to promise.
      if (!writing.includes(op) && responses['507']) missing.push(`${op} lists 507 but writes nothing`);
    }
    expect(missing).toEqual([]);
  });

  it('names every record schema of a 2xx response (components.schemas), so generated clients get real type names', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const name of ['Error', 'PageMeta', 'Content', 'ContentSummary', 'Category', 'Tag', 'Variable', 'SingleType', 'Webhook', 'SiteSettings']) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    // An inline object of six or more properties in a success answer is a record that should be named.
    // The answer itself is a component named after its route (plugins/openapi-names.ts), so the
    // walk starts inside it; a record within it must have a name of its own.
    const inline: string[] = [];
    const component = (schema: any) => (schema?.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema);
    const walk = (schema: any, at: string) => {
      if (!schema || typeof schema !== 'object' || schema.$ref) return;
      if (schema.properties && Object.keys(schema.properties).length >= 6) inline.push(at);
      walkInside(schema, at);
    };
    const walkInside = (schema: any, at: string) => {
      for (const [key, child] of Object.entries(schema?.properties ?? {})) walk(child, `${at}.${key}`);
      if (schema?.items) walk(schema.items, `${at}[]`);
    };
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
          if (status.startsWith('2')) walkInside(component(response.content?.['application/json']?.schema), `${method.toUpperCase()} ${path} ${status}`);
        }
      }
    }
    expect(inline).toEqual([]);
  });
});
