import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../helpers/app.js';
import { expectErrorShape } from '../helpers/http.js';
import { type SiteClient, useTestApp } from '../helpers/suite.js';

const timed = async <T>(work: Promise<T>): Promise<{ value: T; ms: number; at: number }> => {
  const start = performance.now();
  const value = await work;
  return { value, ms: performance.now() - start, at: performance.now() };
};

describe.runIf(TEST_DIALECT === 'sqlite' && process.env.TEST_SQLITE !== 'memory')('an outside SQLite write lock (issue 16 item 2)', () => {
  const ctx = useTestApp({ database: { connectTimeoutMs: 1000, busyTimeoutMs: 600, checkpointIntervalMs: 1000, optimizeIntervalMs: 60_000 } });
  let api: SiteClient;
  let other: SiteClient;
  let outside: BetterSqlite3.Database;

  beforeAll(async () => {
    api = await ctx.site();
    other = await ctx.site();
    expect((await api.post('/v1/tags', { name: 'Before' })).status).toBe(201);
    expect((await other.post('/v1/tags', { name: 'Other' })).status).toBe(201);
    // Another process's connection (the CLI, a backup tool) on the same file.
    outside = new BetterSqlite3(ctx.config.databaseUrl);
  });
  afterAll(() => outside?.close());

  it('serves reads and /health at once while another process holds the write lock, and a write that cannot get it is a 503', async () => {
    outside.exec('begin immediate');
    try {
      const write = timed(api.post('/v1/tags', { name: 'Blocked' }));
      await new Promise((r) => setTimeout(r, 50));
      // While the write waits, the event loop is free: another site's read and /health answer now.
      const health = await timed(ctx.app.inject({ method: 'GET', url: '/health' }));
      const read = await timed(other.get('/v1/tags'));
      expect(health.value.statusCode).toBe(200);
      expect(read.value.status).toBe(200);
      expect(read.value.body.data.map((t: { name: string }) => t.name)).toEqual(['Other']);
      expect(health.ms).toBeLessThan(200);
      expect(read.ms).toBeLessThan(200);
      const blocked = await write;
      expect(read.at).toBeLessThan(blocked.at);
      expect(blocked.value.status).toBe(503);
      expectErrorShape(blocked.value.body, 503, 'SERVICE_UNAVAILABLE');
      expect(Number(blocked.value.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(blocked.ms).toBeGreaterThanOrEqual(550);
    } finally {
      outside.exec('rollback');
    }
    // Nothing of the failed write was kept; the next write goes through.
    expect((await api.get('/v1/tags')).body.data.map((t: { name: string }) => t.name)).toEqual(['Before']);
    expect((await api.post('/v1/tags', { name: 'After' })).status).toBe(201);
  });

  it('every write answers within SQLITE_BUSY_TIMEOUT_MS of its arrival, however many wait in line (issue 36 item 7)', async () => {
    // Four writes at once: the writer connection serves one at a time, so each used to wait for
    // the ones before it to give up and then for its own full timeout (600, 1200, 1800, 2400 ms).
    const names = async () => (await api.get('/v1/tags')).body.data.map((t: { name: string }) => t.name);
    const before = await names();
    outside.exec('begin immediate');
    try {
      const writes = await Promise.all([1, 2, 3, 4].map((n) => timed(api.post('/v1/tags', { name: `Queued ${n}` }))));
      for (const w of writes) {
        expect(w.value.status).toBe(503);
        expectErrorShape(w.value.body, 503, 'SERVICE_UNAVAILABLE');
        expect(w.ms).toBeGreaterThanOrEqual(550);
        expect(w.ms).toBeLessThan(1000);
      }
    } finally {
      outside.exec('rollback');
    }
    expect(await names()).toEqual(before);
  });

  it('a write waiting for the lock goes through when the lock is released within the wait', async () => {
    outside.exec('begin immediate');
    const write = api.post('/v1/tags', { name: 'Waited' });
    setTimeout(() => outside.exec('commit'), 200);
    expect((await write).status).toBe(201);
  });

  it('a transaction waiting for the lock (content create) is a 503 as well, and keeps nothing', async () => {
    const before = (await api.get('/v1/contents')).body.meta.total;
    outside.exec('begin immediate');
    try {
      const res = await api.post('/v1/contents', { title: 'Blocked post', type: 'post' });
      expect(res.status).toBe(503);
      expectErrorShape(res.body, 503, 'SERVICE_UNAVAILABLE');
    } finally {
      outside.exec('rollback');
    }
    expect((await api.get('/v1/contents')).body.meta.total).toBe(before);
  });
});
