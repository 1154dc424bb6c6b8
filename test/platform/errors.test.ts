import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken, type TestContext } from '../helpers/app.js';
import { client, expectErrorShape } from '../helpers/http.js';

let ctx: TestContext;
let token: string;
beforeAll(async () => {
  ctx = await buildTestApp({ bodyLimit: 64 * 1024 });
  token = (await createSiteWithToken(ctx.app)).token;
});
afterAll(() => ctx.close());

describe('error bodies (decisions G3)', () => {
  it('answers an unknown route with 404 ROUTE_NOT_FOUND', async () => {
    const res = await client(ctx.app, token).get('/v1/nothing-here');
    expect(res.status).toBe(404);
    expectErrorShape(res.body, 404, 'ROUTE_NOT_FOUND');
    const outside = await client(ctx.app).get('/nowhere');
    expect(outside.status).toBe(404);
    expectErrorShape(outside.body, 404, 'ROUTE_NOT_FOUND');
  });

  it('answers malformed JSON with 400 INVALID_JSON', async () => {
    const res = await client(ctx.app, token).call('PUT', '/v1/site/settings', '{"name": ', { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400, 'INVALID_JSON');
  });

  it('answers schema violations with 422 and errors per field, all of them at once', async () => {
    const res = await client(ctx.app, token).put('/v1/site/settings', { name: '', domain: 'not a domain!', isActive: 'perhaps' });
    expect(res.status).toBe(422);
    expectErrorShape(res.body, 422, 'VALIDATION_FAILED');
    expect(Object.keys(res.body.errors).sort()).toEqual(['domain', 'isActive', 'name']);
    expect(res.body.errors.name[0]).toMatch(/empty/);
  });

  it('names nested and array paths in errors', async () => {
    const res = await client(ctx.app, token).put('/v1/site/settings/language', {
      defaultLocale: 'en',
      multiLanguageEnabled: true,
      enabledLocales: ['en', 5, 'x'.repeat(40)],
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toContain('enabledLocales[2]');
  });

  it('answers a body over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await client(ctx.app, token).put('/v1/site/settings', { description: 'x'.repeat(70 * 1024) });
    expect(res.status).toBe(413);
    expectErrorShape(res.body, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('answers an unsupported content type with 415', async () => {
    const res = await client(ctx.app, token).call('PUT', '/v1/site/settings', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
    expectErrorShape(res.body, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers an empty JSON body on a route that needs one with 422, not 500', async () => {
    const res = await client(ctx.app, token).call('PUT', '/v1/site/settings', '', { 'content-type': 'application/json' });
    expect([400, 422]).toContain(res.status);
    expectErrorShape(res.body, res.status);
  });

  it('ignores unknown body fields instead of storing them (decisions G7)', async () => {
    const api = client(ctx.app, token);
    const res = await api.put('/v1/site/settings', { name: 'Renamed', secretColumn: 'x', id: 'hijack' });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Renamed');
    expect(res.body.id).not.toBe('hijack');
    expect(res.body).not.toHaveProperty('secretColumn');
  });

  it('carries a request id on every answer', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'trace-123' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('trace-123');
    const res2 = await ctx.app.inject({ method: 'GET', url: '/v1/sites' });
    expect(res2.statusCode).toBe(401);
    expect(String(res2.headers['x-request-id'])).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('input the databases cannot hold alike', () => {
  it('refuses NUL characters in any JSON string with 422 on both databases', async () => {
    const res = await client(ctx.app, token).put('/v1/site/settings', { description: 'before\u0000after' });
    expect(res.status).toBe(422);
    expectErrorShape(res.body, 422, 'VALIDATION_FAILED');
    expect(String((await client(ctx.app, token).get('/v1/site/settings')).body.description)).not.toContain('\u0000');
    // A literal backslash-u sequence in text is fine.
    const ok = await client(ctx.app, token).put('/v1/site/settings', { description: 'escape \\u0000 shown literally' });
    expect(ok.status).toBe(200);
    expect(ok.body.description).toBe('escape \\u0000 shown literally');
  });

  it("answers an overlong path parameter with the error body, not the router's own", async () => {
    const res = await client(ctx.app, token).get(`/v1/tags/${'9'.repeat(3000)}`);
    expect([404, 414, 422]).toContain(res.status);
    expectErrorShape(res.body, res.status);
  });

  it('prototype-poisoning keys in a body are refused, never merged', async () => {
    const res = await client(ctx.app, token).call('PUT', '/v1/site/settings', '{"name":"x","__proto__":{"isAdmin":true}}', {
      'content-type': 'application/json',
    });
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400);
  });
});
