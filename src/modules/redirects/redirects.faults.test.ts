import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../../../test/helpers/app.js';
import { useTestApp } from '../../../test/helpers/suite.js';

describe.runIf(TEST_DIALECT === 'sqlite' && process.env.TEST_SQLITE !== 'memory')('redirect hits under an outside SQLite write lock (decisions R6)', () => {
  const ctx = useTestApp({ database: { connectTimeoutMs: 1000, busyTimeoutMs: 300, checkpointIntervalMs: 1000, optimizeIntervalMs: 60_000 } });

  it('resolves from memory while the file is locked, keeps the hits a failed flush could not write, and writes them all afterwards', async () => {
    const api = await ctx.site();
    const rule = (await api.post('/v1/redirects', { sourcePath: '/locked', targetUrl: '/free' })).body.data;
    expect((await api.get('/v1/redirects/resolve?path=/locked')).status).toBe(200);
    await api.get('/v1/redirects/stats');
    const outside = new BetterSqlite3(ctx.config.databaseUrl);
    try {
      outside.exec('begin immediate');
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const res = await api.get('/v1/redirects/resolve?path=/locked');
        expect(res.status).toBe(200);
        expect(performance.now() - started).toBeLessThan(100);
      }
      await api.get('/v1/redirects/resolve?path=/nowhere');
      // A read flushes first: the flush cannot get the lock, so the read answers 503 and the hits stay pending.
      const blocked = await api.get('/v1/redirects/stats');
      expect(blocked.status).toBe(503);
    } finally {
      outside.exec('rollback');
      outside.close();
    }
    expect((await api.get('/v1/redirects/stats')).body.totalHits).toBe(6);
    expect((await api.get(`/v1/redirects/${rule.id}/logs`)).body.meta.total).toBe(6);
    expect((await api.get('/v1/redirects/not-found')).body.data).toMatchObject([{ path: '/nowhere', hits: 1 }]);
  });
});
