import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { buildTestApp, createSiteWithToken, createTokenFor } from '../helpers/app.js';
import { client, expectErrorShape } from '../helpers/http.js';
import { revokeToken } from '../../src/modules/api-tokens/api-tokens.service.js';
import type { AppModule } from '../../src/modules/types.js';
import { ALL_SCOPES, DELIVERY_SCOPES, SCOPE_CATALOG } from '../../src/shared/scopes.js';
import { useTestApp } from '../helpers/suite.js';

// A probe module: echoes what the auth layer decided, so the mechanism is tested on its own.
const probe: AppModule = {
  name: 'probe',
  routes(app) {
    app.get('/probe/contents', { config: { scope: 'contents.view' } }, async (req) => ({
      access: req.auth.access,
      userId: req.auth.userId,
      siteId: req.auth.siteId,
    }));
    app.post('/probe/contents', { config: { scope: 'contents.view' }, schema: { body: Type.Object({ title: Type.String({ maxLength: 5 }) }) } }, async () => ({
      ok: true,
    }));
  },
};

const ctx = useTestApp({}, { extraModules: [probe] });

describe('authentication', () => {
  it('accepts a valid bearer token and binds the request to its site', async () => {
    const site = await createSiteWithToken(ctx.app);
    const res = await client(ctx.app, site.token).get('/v1/probe/contents');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ access: 'all', userId: site.userId, siteId: site.siteId });
  });

  it('answers 401 for a missing header, another scheme, a malformed, unknown or tampered token', async () => {
    const site = await createSiteWithToken(ctx.app);
    const tampered = site.token.slice(0, -1) + (site.token.endsWith('A') ? 'B' : 'A');
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: `Basic ${site.token}` },
      { authorization: 'Bearer' },
      { authorization: 'Bearer cairn_short' },
      { authorization: `Bearer cairn_${'f'.repeat(32)}_${'x'.repeat(43)}` },
      { authorization: `Bearer ${tampered}` },
    ];
    for (const headers of cases) {
      const res = await ctx.app.inject({ method: 'GET', url: '/v1/probe/contents', headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expectErrorShape(res.json(), 401, 'UNAUTHORIZED');
    }
  });

  it('answers 401 TOKEN_REVOKED once a token is revoked', async () => {
    const site = await createSiteWithToken(ctx.app);
    const api = client(ctx.app, site.token);
    expect((await api.get('/v1/probe/contents')).status).toBe(200);
    expect(await revokeToken(ctx.app.database.db, site.tokenId)).toBe(true);
    const res = await api.get('/v1/probe/contents');
    expect(res.status).toBe(401);
    expectErrorShape(res.body, 401, 'TOKEN_REVOKED');
  });

  it('answers 401 TOKEN_EXPIRED after the expiry, and accepts the token before it', async () => {
    const site = await createSiteWithToken(ctx.app);
    const past = await createTokenFor(ctx.app, site.siteId, { expiresAt: new Date(Date.now() - 1000).toISOString() });
    const future = await createTokenFor(ctx.app, site.siteId, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const expired = await client(ctx.app, past.token).get('/v1/probe/contents');
    expect(expired.status).toBe(401);
    expectErrorShape(expired.body, 401, 'TOKEN_EXPIRED');
    expect((await client(ctx.app, future.token).get('/v1/probe/contents')).status).toBe(200);
  });

  it('never echoes the token in an error body', async () => {
    const site = await createSiteWithToken(ctx.app);
    await revokeToken(ctx.app.database.db, site.tokenId);
    const res = await client(ctx.app, site.token).get('/v1/probe/contents');
    expect(res.text).not.toContain(site.token.slice(6, 38));
  });
});

describe('scopes', () => {
  it('holds the full catalog of the spec as one constant', () => {
    expect(SCOPE_CATALOG.contents).toContain('contents.publish.own');
    expect(ALL_SCOPES).toContain('invoicing.settings.update');
    expect(ALL_SCOPES).toContain('calendars.delete');
    expect(new Set(ALL_SCOPES).size).toBe(ALL_SCOPES.length);
  });

  it('answers 403 before validating the body when the scope is missing', async () => {
    const site = await createSiteWithToken(ctx.app, { scopes: ['sites.view'] });
    const res = await client(ctx.app, site.token).post('/v1/probe/contents', { title: 'far too long' });
    expect(res.status).toBe(403);
    expectErrorShape(res.body, 403, 'MISSING_SCOPE');
  });

  it('grants a route through the .own twin and tells the service access is limited to own records', async () => {
    const site = await createSiteWithToken(ctx.app);
    const own = await createTokenFor(ctx.app, site.siteId, { scopes: ['contents.view.own'], newUser: 'Writer' });
    const res = await client(ctx.app, own.token).get('/v1/probe/contents');
    expect(res.status).toBe(200);
    expect(res.body.access).toBe('own');
    expect(res.body.userId).toBe(own.userId);
    expect(res.body.userId).not.toBe(site.userId);
  });

  it('keeps delivery tokens read-only: writes are 403 even with the scope, reads pass', async () => {
    const site = await createSiteWithToken(ctx.app);
    const delivery = await createTokenFor(ctx.app, site.siteId, { kind: 'delivery', scopes: ['contents.view', 'contents.create'] });
    const api = client(ctx.app, delivery.token);
    expect((await api.get('/v1/probe/contents')).status).toBe(200);
    const write = await api.post('/v1/probe/contents', { title: 'ok' });
    expect(write.status).toBe(403);
    expectErrorShape(write.body, 403, 'READ_ONLY_TOKEN');
  });

  it("stores only the content groups' read scopes on a delivery token (decisions G13, H11)", async () => {
    const site = await createSiteWithToken(ctx.app);
    const delivery = await createTokenFor(ctx.app, site.siteId, { kind: 'delivery', scopes: 'all' });
    const row = await ctx.app.database.db
      .selectFrom('api_tokens')
      .select(['scopes', 'secret_hash'])
      .where('id', '=', delivery.tokenId)
      .executeTakeFirstOrThrow();
    const scopes = typeof row.scopes === 'string' ? JSON.parse(row.scopes) : row.scopes;
    expect([...scopes].sort()).toEqual([...DELIVERY_SCOPES].sort());
    expect(scopes.every((s: string) => s.endsWith('.view'))).toBe(true);
    // Only a hash is stored.
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(delivery.token).not.toContain(row.secret_hash);
  });
});

describe('delivery tokens read published content only (decisions G13, H11)', () => {
  it('refuses webhooks, delivery logs, notification settings and site settings, even for an older token row holding those scopes', async () => {
    const site = await createSiteWithToken(ctx.app);
    const delivery = await createTokenFor(ctx.app, site.siteId, { kind: 'delivery', scopes: 'all' });
    // A token row written before the rule, with every read scope.
    const reads = ALL_SCOPES.filter((s) => s.endsWith('.view'));
    await ctx.app.database.db
      .updateTable('api_tokens')
      .set({ scopes: JSON.stringify(reads) })
      .where('id', '=', delivery.tokenId)
      .execute();
    const api = client(ctx.app, delivery.token);
    for (const url of ['/v1/webhooks', '/v1/webhooks/events', '/v1/settings/notifications', '/v1/site/settings']) {
      const res = await api.get(url);
      expect(res.status, url).toBe(403);
      expectErrorShape(res.body, 403, 'MISSING_SCOPE');
    }
    for (const url of ['/v1/contents', '/v1/categories', '/v1/tags', '/v1/variables', '/v1/single-types']) expect((await api.get(url)).status, url).toBe(200);
  });

  it("keeps only the content groups' read scopes when a delivery token is created with others", async () => {
    const site = await createSiteWithToken(ctx.app);
    const delivery = await createTokenFor(ctx.app, site.siteId, {
      kind: 'delivery',
      scopes: ['contents.view', 'webhooks.view', 'notifications.settings.view'],
    });
    const row = await ctx.app.database.db.selectFrom('api_tokens').select('scopes').where('id', '=', delivery.tokenId).executeTakeFirstOrThrow();
    expect(typeof row.scopes === 'string' ? JSON.parse(row.scopes) : row.scopes).toEqual(['contents.view']);
    expect(DELIVERY_SCOPES).not.toContain('webhooks.view');
  });
});

describe('conditional scopes', () => {
  it('are validated at start-up and listed in the OpenAPI document', async () => {
    const bad: AppModule = {
      name: 'bad',
      routes(app) {
        app.put('/odd', { config: { scope: 'contents.update', conditionalScopes: [{ scope: 'contents.pubish' as any, when: 'always' }] } }, async () => ({
          ok: true,
        }));
      },
    };
    await expect(buildTestApp({}, { extraModules: [bad] })).rejects.toThrow(/unknown conditional scope contents.pubish/);
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const put = doc.paths['/v1/contents/{id}'].put;
    expect(put['x-conditional-scopes']).toEqual([expect.objectContaining({ scope: 'contents.publish' })]);
    expect(put.description).toContain('contents.publish');
  });
});

describe('the scope guard at boot', () => {
  it('refuses to start when a /v1 route declares no scope', async () => {
    const bad: AppModule = {
      name: 'bad',
      routes(app) {
        app.get('/unguarded', async () => ({ ok: true }));
      },
    };
    await expect(buildTestApp({}, { extraModules: [bad] })).rejects.toThrow(/GET \/v1\/unguarded declares no valid scope/);
  });

  it('refuses to start when a route names a scope outside the catalog', async () => {
    const bad: AppModule = {
      name: 'bad',
      routes(app) {
        app.get('/typo', { config: { scope: 'contents.veiw' as any } }, async () => ({ ok: true }));
      },
    };
    await expect(buildTestApp({}, { extraModules: [bad] })).rejects.toThrow(/declares no valid scope/);
  });

  it('checks routes outside /v1 too: each declares its scope, and only public ones live there', async () => {
    const unguarded: AppModule = {
      name: 'bad',
      routes() {},
      rootRoutes(app) {
        app.get('/outside', async () => ({ ok: true }));
      },
    };
    await expect(buildTestApp({}, { extraModules: [unguarded] })).rejects.toThrow(/GET \/outside declares no valid scope/);
    const tokenOutside: AppModule = {
      name: 'bad',
      routes() {},
      rootRoutes(app) {
        app.get('/outside', { config: { scope: 'contents.view' } }, async () => ({ ok: true }));
      },
    };
    await expect(buildTestApp({}, { extraModules: [tokenOutside] })).rejects.toThrow(/GET \/outside is outside \/v1, so its scope must be 'public'/);
    // The app's own routes outside /v1 declare theirs (the app starts), and answer without a token.
    expect((await ctx.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    expect((await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
  });
});
