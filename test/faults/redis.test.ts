import net from 'node:net';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

/** A log stream the test can read: one parsed line per entry. */
function captureLog() {
  const lines: Array<{ level: number; msg: string }> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: { level: 'info', stream } };
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const health = async (ctx: Awaited<ReturnType<typeof buildTestApp>>) => JSON.parse((await ctx.app.inject({ method: 'GET', url: '/health' })).body);

describe('Redis away (issue 16 item 3)', () => {
  it('with REDIS_URL on a closed port, requests answer at once and are still limited, in memory, said once in the log and in /health', async () => {
    const log = captureLog();
    const ctx = await buildTestApp(
      { redisUrl: `redis://127.0.0.1:${await closedPort()}`, rateLimit: { max: 5, publicMax: 5, windowMs: 60_000 } },
      { logger: log.logger },
    );
    try {
      const site = await createSiteWithToken(ctx.app);
      const api = client(ctx.app, site.token);
      const started = performance.now();
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await api.get('/v1/site/info')).status);
      expect(performance.now() - started).toBeLessThan(1500);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      expect(await health(ctx)).toMatchObject({ status: 'degraded', rateLimit: { store: 'memory', redis: 'unreachable' } });
      expect(log.lines.filter((l) => /redis unreachable/.test(l.msg))).toHaveLength(1);
    } finally {
      await ctx.close();
    }
  });

  describe.skipIf(!process.env.REDIS_URL)('with a real Redis that goes away while serving and comes back', () => {
    it('fails fast to in-process counters, and goes back to Redis when it returns', async () => {
      const target = new URL(process.env.REDIS_URL!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
      const direct = new Redis(process.env.REDIS_URL!);
      const log = captureLog();
      const ctx = await buildTestApp(
        { redisUrl: `redis://127.0.0.1:${proxy.port}`, rateLimit: { max: 1000, publicMax: 1000, windowMs: 60_000 } },
        { logger: log.logger },
      );
      try {
        const site = await createSiteWithToken(ctx.app);
        const api = client(ctx.app, site.token);
        const waitFor = async (store: 'redis' | 'memory') => {
          for (let i = 0; i < 100 && (await health(ctx)).rateLimit.store !== store; i++) {
            await api.get('/v1/site/info');
            await new Promise((r) => setTimeout(r, 50));
          }
          expect((await health(ctx)).rateLimit.store).toBe(store);
        };
        await waitFor('redis');
        expect((await api.get('/v1/site/info')).status).toBe(200);
        const key = `cairn-rl:t:${site.tokenId}`;
        const counted = Number(await direct.get(key));
        expect(counted).toBeGreaterThan(0);

        // Redis hangs (connections dropped, new ones never answered): each request stays fast.
        // (Log lines are counted from here: a slow first connection on a loaded machine is an outage too.)
        const linesBefore = log.lines.length;
        proxy.cut('blackhole');
        const started = performance.now();
        for (let i = 0; i < 10; i++) expect((await api.get('/v1/site/info')).status).toBe(200);
        expect(performance.now() - started).toBeLessThan(2000);
        expect(await health(ctx)).toMatchObject({ status: 'degraded', rateLimit: { store: 'memory', redis: 'unreachable' } });
        expect(Number(await direct.get(key))).toBe(counted);

        proxy.restore();
        await waitFor('redis');
        expect((await health(ctx)).status).toBe('ok');
        const before = Number(await direct.get(key));
        await api.get('/v1/site/info');
        expect(Number(await direct.get(key))).toBe(before + 1);
        const outage = log.lines.slice(linesBefore);
        expect(outage.filter((l) => /redis unreachable/.test(l.msg))).toHaveLength(1);
        expect(outage.filter((l) => /redis is back/.test(l.msg))).toHaveLength(1);
      } finally {
        await ctx.close();
        direct.disconnect();
        await proxy.close();
      }
    }, 30_000);
  });
});
