import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { createApp, type CreateAppOptions } from '../../src/app.js';
import { createSite } from '../../src/modules/sites/sites.service.js';
import { createUser } from '../../src/modules/users/users.service.js';
import { createToken, type TokenKind } from '../../src/modules/api-tokens/api-tokens.service.js';
import { ALL_SCOPES } from '../../src/shared/scopes.js';
import { testBucket } from './s3.js';

export type TestApp = Awaited<ReturnType<typeof createApp>>;

/**
 * The database the suite runs on: PostgreSQL when TEST_DATABASE_URL is set, else SQLite in a
 * temporary file (WAL, with the read-only reader connection production uses; `TEST_SQLITE=memory`
 * for an in-memory database instead).
 */
export const TEST_DIALECT: 'sqlite' | 'postgres' = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';

/** Where a test app keeps files: local disk under its data directory, or a bucket of the test S3 server. */
export type TestStorage = 'local' | 's3';

export interface TestContext {
  app: TestApp;
  config: Config;
  close(): Promise<void>;
}

export const TEST_SECRET_KEY = 'a'.repeat(64);

/**
 * A fresh app on a fresh database for one test file: SQLite in memory, or on PostgreSQL a new
 * schema dropped afterwards. Nothing is shared between files.
 */
export async function buildTestApp(overrides: Partial<Config> = {}, options: CreateAppOptions = {}, storage: TestStorage = 'local'): Promise<TestContext> {
  const pgUrl = process.env.TEST_DATABASE_URL;
  let schema: string | undefined;
  let sqliteFile: string | undefined;
  if (!pgUrl && process.env.TEST_SQLITE !== 'memory') sqliteFile = path.join(os.tmpdir(), `cairn-test-${randomUUID()}.db`);
  if (pgUrl) {
    schema = `t_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    await createMigratedSchema(pgUrl, schema);
  }
  // Files (form uploads) go to a directory of this app's own, removed on close.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-test-data-'));
  const config = loadConfig(
    { LOG_LEVEL: 'silent', CAIRN_ALLOW_PRIVATE_NETWORK: 'true', PORT: '0', CAIRN_DATA_DIR: dataDir },
    {
      databaseUrl: pgUrl ?? sqliteFile ?? ':memory:',
      pgSchema: schema,
      rateLimit: { max: 1_000_000, publicMax: 1_000_000, windowMs: 60_000 },
      // Tests drive the worker themselves (app.worker.runDueJobs / tick) unless they turn it on.
      worker: { enabled: false, pollMs: 100 },
      // A fixed server key, so no test writes a key file into the working directory.
      secrets: { key: TEST_SECRET_KEY, previous: [] },
      ...overrides,
    },
  );
  // On 's3', files go to a new bucket of the test S3 server, removed with what it holds on close.
  const bucket = storage === 's3' ? await testBucket() : null;
  if (bucket) config.s3 = bucket.config;
  const app = await createApp(config, { logger: false, ...options });
  await app.ready();
  return {
    app,
    config,
    async close() {
      await app.close();
      if (pgUrl && schema) await adminQuery(pgUrl, `drop schema if exists ${schema} cascade`);
      if (sqliteFile) for (const suffix of ['', '-wal', '-shm']) fs.rmSync(sqliteFile + suffix, { force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
      await bucket?.remove();
    },
  };
}

/**
 * A new PostgreSQL schema with every migration applied. Migrating a schema takes 1-3 s (about 40
 * migrations, each its own round trips); a suite builds hundreds of apps. So each test process
 * migrates one template schema once, dumps it with `pg_dump` (tables, indexes, functions, triggers
 * and the rows the migrations wrote, the migrator's own included), and every app replays that
 * text under its own schema name: one round trip. The app's own `migrateToLatest` then finds
 * nothing to do, and a schema built this way is the one the migrations build (a test in
 * test/platform/migrations.test.ts compares them). Without `pg_dump` the schema is migrated.
 */
export async function createMigratedSchema(url: string, schema: string): Promise<void> {
  templateDump ??= dumpMigratedTemplate(url).catch(() => null);
  const dump = await templateDump;
  if (!dump) return adminQuery(url, `create schema ${schema}`);
  // A test schema need not survive a crash: no wait for the WAL flush at commit.
  await adminQuery(url, `set synchronous_commit = off; ${dump.text.replaceAll(dump.schema, schema)}`);
}

let templateDump: Promise<{ schema: string; text: string } | null> | undefined;

async function dumpMigratedTemplate(url: string): Promise<{ schema: string; text: string }> {
  const { connectDatabase } = await import('../../src/db/connect.js');
  const { migrateToLatest } = await import('../../src/db/migrate.js');
  // A name no table, column or function body can contain, so replacing it is exact.
  const schema = `cairn_template_${randomUUID().replace(/-/g, '')}`;
  await adminQuery(url, `create schema ${schema}`);
  try {
    const database = connectDatabase({ databaseUrl: url, pgSchema: schema });
    try {
      await migrateToLatest(database);
    } finally {
      await database.close();
    }
    const { execFileSync } = await import('node:child_process');
    const text = execFileSync('pg_dump', ['--dbname', url, '--schema', schema, '--no-owner', '--no-privileges', '--inserts'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    // psql meta-commands (`\\restrict`, which newer pg_dump releases write) are not SQL.
    return { schema, text: text.replace(/^\\.*$/gm, '') };
  } finally {
    await adminQuery(url, `drop schema if exists ${schema} cascade`);
  }
}

export async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

export interface SiteFixture {
  siteId: string;
  userId: string;
  token: string;
  tokenId: string;
}

/** A new site with its owner and a token (every scope unless told otherwise). */
export async function createSiteWithToken(
  app: TestApp,
  options: { scopes?: readonly string[] | 'all'; kind?: TokenKind; name?: string; domain?: string } = {},
): Promise<SiteFixture> {
  const site = await createSite(app.database.db, { name: options.name ?? `Site ${randomUUID().slice(0, 8)}`, domain: options.domain ?? 'example.test' });
  const token = await createToken(app.database.db, {
    siteId: site.id,
    userId: site.ownerUserId,
    kind: options.kind,
    scopes: options.scopes ?? 'all',
  });
  return { siteId: site.id, userId: site.ownerUserId, token: token.token, tokenId: token.id };
}

/** Another token on an existing site, optionally for a new user (for `.own` scopes). */
export async function createTokenFor(
  app: TestApp,
  siteId: string,
  options: { scopes?: readonly string[] | 'all'; kind?: TokenKind; userId?: string; newUser?: string; expiresAt?: string | null } = {},
): Promise<{ token: string; tokenId: string; userId: string }> {
  let userId = options.userId;
  if (!userId) {
    // An administrator, as migration 0026 made every user but the owner: the token's scopes decide.
    const user = options.newUser ? await createUser(app.database.db, siteId, { fullName: options.newUser, roleSlug: 'administrator' }) : null;
    userId =
      user?.id ?? (await app.database.db.selectFrom('users').select('id').where('site_id', '=', siteId).orderBy('created_at').executeTakeFirstOrThrow()).id;
  }
  const token = await createToken(app.database.db, {
    siteId,
    userId,
    kind: options.kind,
    scopes: options.scopes ?? 'all',
    expiresAt: options.expiresAt ?? null,
  });
  return { token: token.token, tokenId: token.id, userId };
}

export function allScopesExcept(...excluded: string[]): string[] {
  return ALL_SCOPES.filter((s) => !excluded.includes(s) && !excluded.some((e) => s === `${e}.own`));
}
