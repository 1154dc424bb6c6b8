import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken, createTokenFor, type TestContext } from '../helpers/app.js';
import { client, expectErrorShape } from '../helpers/http.js';

const LIMIT = 5;

describe('rate limiting (decisions G11), in memory', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestApp({ rateLimit: { max: LIMIT, publicMax: 3, windowMs: 60_000 }, redisUrl: null });
  });
  afterAll(() => ctx.close());

  it('sends RateLimit headers on every answer and a 429 with Retry-After past the limit', async () => {
    const site = await createSiteWithToken(ctx.app);
    const api = client(ctx.app, site.token);
    for (let i = 1; i <= LIMIT; i++) {
      const res = await api.get('/v1/sites');
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe(String(LIMIT));
      expect(res.headers['ratelimit-remaining']).toBe(String(LIMIT - i));
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
    }
    const limited = await api.get('/v1/sites');
    expect(limited.status).toBe(429);
    expectErrorShape(limited.body, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
  });

  it('counts per token: another token of the same site has its own budget', async () => {
    const site = await createSiteWithToken(ctx.app);
    const other = await createTokenFor(ctx.app, site.siteId);
    const api = client(ctx.app, site.token);
    for (let i = 0; i < LIMIT; i++) await api.get('/v1/site/info');
    expect((await api.get('/v1/site/info')).status).toBe(429);
    expect((await client(ctx.app, other.token).get('/v1/site/info')).status).toBe(200);
  });

  it('counts requests without a token per client address, and 401s carry the headers', async () => {
    const ip = '203.0.113.7';
    for (let i = 0; i < 3; i++) {
      const last = await ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: ip });
      expect(last.statusCode).toBe(401);
      expect(last.headers['ratelimit-limit']).toBe('3');
    }
    const limited = await ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: ip });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const elsewhere = await ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: '203.0.113.8' });
    expect(elsewhere.statusCode).toBe(401);
  });
});

// With REDIS_URL (CI sets it for the PostgreSQL run), two instances share one counter.
describe.skipIf(!process.env.REDIS_URL)('rate limiting with Redis across instances', () => {
  let one: TestContext;
  let two: TestContext;
  beforeAll(async () => {
    const rateLimit = { max: 4, publicMax: 4, windowMs: 60_000 };
    one = await buildTestApp({ rateLimit, redisUrl: process.env.REDIS_URL! });
    // Two instances of one deployment: one database, one Redis.
    two = await buildTestApp({ rateLimit, redisUrl: process.env.REDIS_URL! }, { database: one.app.database });
  });
  afterAll(async () => {
    await two?.close(); // first: it uses instance one's database
    await one?.close();
  });

  it('shares the counters of a token between two app instances', async () => {
    // Same token on both instances: each counts it against the token in Redis, so the budget is
    // shared. (A token an instance cannot verify counts against the client address instead, H21.)
    const site = await createSiteWithToken(one.app, { name: `Redis ${randomUUID()}` });
    const a = client(one.app, site.token);
    const b = client(two.app, site.token);
    expect((await a.get('/v1/sites')).headers['ratelimit-remaining']).toBe('3');
    expect((await b.get('/v1/sites')).headers['ratelimit-remaining']).toBe('2');
    expect((await a.get('/v1/sites')).headers['ratelimit-remaining']).toBe('1');
    expect((await b.get('/v1/sites')).headers['ratelimit-remaining']).toBe('0');
    const limited = await a.get('/v1/sites');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});

describe('rate limiting cannot be bypassed (issue 16 item 8)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestApp({ rateLimit: { max: LIMIT, publicMax: 3, windowMs: 60_000 }, redisUrl: null });
  });
  afterAll(() => ctx.close());

  const fakeToken = () => `cairn_${randomUUID().replace(/-/g, '')}_${'A'.repeat(43)}`;

  it('counts a fresh made-up token on every request against the client address', async () => {
    const ip = '198.51.100.20';
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: ip, headers: { authorization: `Bearer ${fakeToken()}` } });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // A token this process has verified keeps its own budget, from that address too; so does a
    // valid token first seen from the flooding address (issue 36 item 8: the flood no longer
    // refuses it), while the flood's next made-up token is still a 429.
    const site = await createSiteWithToken(ctx.app);
    const fresh = await createSiteWithToken(ctx.app);
    expect((await client(ctx.app, site.token).get('/v1/sites')).status).toBe(200);
    const ok = await ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: ip, headers: { authorization: `Bearer ${site.token}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['ratelimit-limit']).toBe(String(LIMIT));
    const unseen = await ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: ip, headers: { authorization: `Bearer ${fresh.token}` } });
    expect(unseen.statusCode).toBe(200);
    expect(unseen.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
    const flood = await Promise.all(
      Array.from({ length: 20 }, () =>
        ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: ip, headers: { authorization: `Bearer ${fakeToken()}` } }),
      ),
    );
    expect(flood.map((r) => r.statusCode)).toEqual(Array(20).fill(429));
    // During a parallel flood, a valid token from the same address is served.
    const third = await createSiteWithToken(ctx.app);
    const during = await Promise.all([
      ...Array.from({ length: 10 }, () =>
        ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: ip, headers: { authorization: `Bearer ${fakeToken()}` } }),
      ),
      ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: ip, headers: { authorization: `Bearer ${third.token}` } }),
    ]);
    expect(during.map((r) => r.statusCode)).toEqual([...Array(10).fill(429), 200]);
  });

  it('counts a real token id with a wrong secret against the address, not against the token', async () => {
    const site = await createSiteWithToken(ctx.app);
    const forged = `${site.token.slice(0, 39)}${'B'.repeat(43)}`;
    expect(forged).not.toBe(site.token);
    for (let i = 0; i < 3; i++) {
      const res = await ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: '198.51.100.21', headers: { authorization: `Bearer ${forged}` } });
      expect(res.statusCode).toBe(401);
    }
    expect(
      (await ctx.app.inject({ method: 'GET', url: '/v1/sites', remoteAddress: '198.51.100.21', headers: { authorization: `Bearer ${forged}` } })).statusCode,
    ).toBe(429);
    // The token's owner still has its whole budget.
    const res = await client(ctx.app, site.token).get('/v1/sites');
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
  });

  it('limits unknown routes too', async () => {
    const ip = '198.51.100.22';
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await ctx.app.inject({ method: 'GET', url: `/v1/no-such-route-${i}`, remoteAddress: ip })).statusCode);
    expect(statuses).toEqual([404, 404, 404, 429]);
    const outside = await ctx.app.inject({ method: 'GET', url: '/wp-login.php', remoteAddress: ip });
    expect(outside.statusCode).toBe(429);
    expectErrorShape(JSON.parse(outside.body), 429, 'RATE_LIMITED');
  });
});
