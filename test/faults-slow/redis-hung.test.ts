import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken, type TestContext } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { type OwnRedis, startOwnRedis } from '../helpers/redis-server.js';

const health = async (ctx: TestContext) => JSON.parse((await ctx.app.inject({ method: 'GET', url: '/health' })).body);

/** Waits (without sending any request but /health) until /health says `status`, or fails after `ms`. */
async function healthBecomes(ctx: TestContext, status: string, ms: number): Promise<number> {
  const started = performance.now();
  while ((await health(ctx)).status !== status) {
    if (performance.now() - started > ms) throw new Error(`/health did not become ${status} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return performance.now() - started;
}

describe('a hung Redis (SIGSTOP) costs one command timeout, not one per request (issue 36 item 7, decisions H21)', () => {
  let redis: OwnRedis;
  let ctx: TestContext;
  beforeAll(async () => {
    redis = await startOwnRedis();
    ctx = await buildTestApp({ redisUrl: redis.url, rateLimit: { max: 1000, publicMax: 1000, windowMs: 60_000 } });
  });
  afterAll(async () => {
    await ctx?.close();
    await redis?.stop();
  });

  it('trips to in-process counters after one timeout, probes in the background, and /health recovers with no traffic', async () => {
    const site = await createSiteWithToken(ctx.app);
    const api = client(ctx.app, site.token);
    const direct = new Redis(redis.url);
    try {
      expect((await api.get('/v1/site/info')).status).toBe(200);
      const key = `cairn-rl:t:${site.tokenId}`;
      expect(Number(await direct.get(key))).toBe(1);
      expect(await health(ctx)).toMatchObject({ status: 'ok', rateLimit: { store: 'redis', redis: 'ok' } });

      redis.pause();
      // 20 requests in a row: the first waits for the 250 ms command timeout, the others not at
      // all (before: 250 ms each, 5 s in all).
      const times: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        expect((await api.get('/v1/site/info')).status).toBe(200);
        times.push(performance.now() - started);
      }
      expect(times[0]).toBeGreaterThanOrEqual(240);
      expect(times.slice(1).filter((ms) => ms >= 200)).toEqual([]);
      expect(await health(ctx)).toMatchObject({ status: 'degraded', rateLimit: { store: 'memory', redis: 'unreachable' } });
      // Still degraded a while later: the probe does not close the breaker while Redis hangs.
      await new Promise((r) => setTimeout(r, 1500));
      expect((await health(ctx)).status).toBe('degraded');

      redis.resume();
      // No request but /health: the background probe finds Redis back.
      await healthBecomes(ctx, 'ok', 5000);
      expect(await health(ctx)).toMatchObject({ rateLimit: { store: 'redis', redis: 'ok' } });
      // Counting goes back to Redis. Of the 20 requests of the outage only the first asked Redis
      // (its command, sent before the timeout, runs when Redis continues); 19 counted in memory only.
      expect(Number(await direct.get(key))).toBe(2);
      expect((await api.get('/v1/site/info')).status).toBe(200);
      expect(Number(await direct.get(key))).toBe(3);
    } finally {
      direct.disconnect();
    }
  }, 30_000);
});
