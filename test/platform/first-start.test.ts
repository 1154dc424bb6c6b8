import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { bootstrapIfEmpty } from '../../src/bootstrap.js';
import { loadConfig } from '../../src/config.js';
import { adminQuery, TEST_SECRET_KEY } from '../helpers/app.js';

/**
 * Issue 36 item 12: instances started at the same moment on an empty database. Each round makes
 * a fresh database (a PostgreSQL schema, or a SQLite file), starts three apps on it at once
 * (migrations included on PostgreSQL, whose migrator takes an advisory lock) and runs each
 * one's first-start bootstrap at once, as `server.ts` does: none may fail, and exactly one site
 * and one first-start token are made. SQLite's migrator takes no lock across connections (Kysely
 * assumes one connection), so there the file is migrated first and the instances start together
 * on the migrated, empty database.
 */
const pgUrl = process.env.TEST_DATABASE_URL;
const INSTANCES = 3;
const ROUNDS = 4;

async function freshDatabase() {
  if (pgUrl) {
    const schema = `t_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    await adminQuery(pgUrl, `create schema ${schema}`);
    return { databaseUrl: pgUrl, pgSchema: schema, drop: () => adminQuery(pgUrl, `drop schema if exists ${schema} cascade`) };
  }
  const file = path.join(os.tmpdir(), `cairn-first-start-${randomUUID()}.db`);
  const migrating = await createApp(
    loadConfig(
      { LOG_LEVEL: 'silent', PORT: '0' },
      { databaseUrl: file, worker: { enabled: false, pollMs: 100 }, secrets: { key: TEST_SECRET_KEY, previous: [] } },
    ),
    {
      logger: false,
    },
  );
  await migrating.close();
  return {
    databaseUrl: file,
    pgSchema: undefined,
    drop: async () => {
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
    },
  };
}

async function startInstance(database: { databaseUrl: string; pgSchema?: string }, dataDir: string) {
  const config = loadConfig(
    { LOG_LEVEL: 'silent', PORT: '0', CAIRN_DATA_DIR: dataDir },
    { ...database, worker: { enabled: false, pollMs: 100 }, secrets: { key: TEST_SECRET_KEY, previous: [] } },
  );
  const app = await createApp(config, { logger: false });
  try {
    return { app, created: await bootstrapIfEmpty(app.database.db) };
  } catch (err) {
    await app.close();
    throw err;
  }
}

describe('first start of several instances at once (issue 36 item 12)', () => {
  it(`${INSTANCES} instances started together on an empty database: none fails, one site and one token are made, ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const database = await freshDatabase();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-first-start-'));
      const started = await Promise.allSettled(Array.from({ length: INSTANCES }, () => startInstance(database, dataDir)));
      try {
        const failures = started.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []));
        expect(failures, `round ${round}`).toEqual([]);
        const instances = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
        expect(instances.filter((i) => i.created).length, `round ${round}`).toBe(1);
        const db = instances[0]!.app.database.db;
        const sites = await db.selectFrom('sites').select(['id', 'slug']).execute();
        expect(sites).toEqual([{ id: instances.find((i) => i.created)!.created!.site.id, slug: 'my-site' }]);
        const tokens = await db.selectFrom('api_tokens').select('name').execute();
        expect(tokens).toEqual([{ name: 'First-start token' }]);
        // A later start finds the site and makes nothing.
        expect(await bootstrapIfEmpty(db)).toBeNull();
      } finally {
        for (const s of started) if (s.status === 'fulfilled') await s.value.app.close();
        await database.drop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }, 120_000);
});
