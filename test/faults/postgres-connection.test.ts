import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createApp } from '../../src/app.js';
import { buildTestApp, TEST_DIALECT } from '../helpers/app.js';
import { site } from '../helpers/suite.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const PG_URL = process.env.TEST_DATABASE_URL;

async function adminQuery(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    return await admin.query(text, values);
  } finally {
    await admin.end();
  }
}

/** Ends every session of this test's app (they carry the schema in application_name). */
async function terminateSessions(schema: string): Promise<number> {
  const res = await adminQuery('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()', [
    `cairn:${schema}`,
  ]);
  return res.rowCount ?? 0;
}

describe.runIf(TEST_DIALECT === 'postgres')('PostgreSQL connections lost under load (issue 16 item 1)', () => {
  it('answers 503 with Retry-After for the requests that lose their connection, and serves the next ones', async () => {
    const ctx = await buildTestApp();
    try {
      const api = await site(ctx.app);
      for (let i = 0; i < 5; i++) expect((await api.post('/v1/tags', { name: `Tag ${i}` })).status).toBe(201);
      const statuses = new Map<number, number>();
      let stop = false;
      const failures: unknown[] = [];
      // Eight request loops: reads, and writes that hold a client through a transaction.
      const loop = async (n: number) => {
        let i = 0;
        while (!stop) {
          const res = n % 2 ? await api.get('/v1/tags?limit=100') : await api.post('/v1/tags', { name: `Loop ${n} ${i++}` });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 503) {
            if (!res.headers['retry-after'] || res.body.code !== 'SERVICE_UNAVAILABLE') failures.push(res.body);
          } else if (res.status !== 200 && res.status !== 201) failures.push(res.body);
        }
      };
      const loops = Array.from({ length: 8 }, (_, n) => loop(n));
      let killed = 0;
      for (let round = 0; round < 5; round++) {
        await new Promise((r) => setTimeout(r, 150));
        killed += await terminateSessions(ctx.config.pgSchema!);
      }
      await new Promise((r) => setTimeout(r, 150));
      stop = true;
      await Promise.all(loops);
      expect(killed).toBeGreaterThan(0);
      expect(failures).toEqual([]);
      // The process is alive and the next requests are served.
      for (let i = 0; i < 3; i++) expect((await api.get('/v1/tags')).status).toBe(200);
      expect((await ctx.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    } finally {
      await ctx.close();
    }
  }, 60_000);

  it('waits for the database at start-up with backoff instead of exiting at once', async () => {
    const url = new URL(PG_URL!);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) }, { startCut: true });
    try {
      url.host = `127.0.0.1:${proxy.port}`;
      const schema = `t_startup_${Date.now()}`;
      await adminQuery(`create schema ${schema}`);
      const config = loadConfig(
        { LOG_LEVEL: 'silent', PORT: '0', DATABASE_CONNECT_TIMEOUT_MS: '20000' },
        { databaseUrl: url.toString(), pgSchema: schema, worker: { enabled: false, pollMs: 100 } },
      );
      const started = Date.now();
      setTimeout(() => proxy.restore(), 1500);
      const app = await createApp(config, { logger: false });
      try {
        expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
        expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
      } finally {
        await app.close();
        await adminQuery(`drop schema ${schema} cascade`);
      }
    } finally {
      await proxy.close();
    }
  }, 30_000);

  it('gives up after DATABASE_CONNECT_TIMEOUT_MS with a clear error', async () => {
    const url = new URL(PG_URL!);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) }, { startCut: true });
    try {
      url.host = `127.0.0.1:${proxy.port}`;
      const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0', DATABASE_CONNECT_TIMEOUT_MS: '1000' }, { databaseUrl: url.toString() });
      await expect(createApp(config, { logger: false })).rejects.toThrow(/database/i);
    } finally {
      await proxy.close();
    }
  }, 30_000);
});
