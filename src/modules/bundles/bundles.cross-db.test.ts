import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestContext } from '../../../test/helpers/app.js';
import { answersOf, bundleDeps, clientFor, filesOf, fillSite } from '../../../test/helpers/site-bundle.js';
import { site } from '../../../test/helpers/suite.js';
import { exportSite } from './bundles.export.js';
import { importBundle } from './bundles.import.js';

/**
 * Moving a site between the two databases (issue 35: "SQLite -> PostgreSQL and back"): one app on
 * SQLite, one on PostgreSQL, each with its own files; the site filled on SQLite, its bundle
 * imported on PostgreSQL, that copy's bundle imported on SQLite again, each copy answering like
 * the original. Needs PostgreSQL, so it runs in the PostgreSQL run of the suite (TEST_DATABASE_URL).
 */
const pgUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!pgUrl)('site bundles across databases', () => {
  let lite: TestContext;
  let pg: TestContext;
  const sqliteFile = path.join(os.tmpdir(), `cairn-cross-${randomUUID()}.db`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-cross-bundle-'));
  beforeAll(async () => {
    pg = await buildTestApp();
    lite = await buildTestApp({ databaseUrl: sqliteFile, pgSchema: undefined });
  });
  afterAll(async () => {
    await lite?.close();
    await pg?.close();
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(sqliteFile + suffix, { force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('SQLite -> PostgreSQL -> SQLite keeps every answer and every file', async () => {
    expect(lite.app.database.dialect).toBe('sqlite');
    expect(pg.app.database.dialect).toBe('postgres');
    const original = await site(lite.app, ['en', 'de']);
    await fillSite(lite.app, original);
    const answers = await answersOf(original);
    const files = await filesOf(lite.app, original);

    const toPg = path.join(dir, 'from-sqlite.tar.gz');
    await exportSite(bundleDeps(lite.app, lite.config), original.siteId, toPg, { withSubmissions: true });
    const onPg = await importBundle(bundleDeps(pg.app, pg.config), toPg, {});
    const pgCopy = await clientFor(pg.app, onPg.siteId!);
    expect(await answersOf(pgCopy)).toEqual(answers);
    expect(await filesOf(pg.app, pgCopy)).toEqual(files);

    const back = path.join(dir, 'from-postgres.tar.gz');
    await exportSite(bundleDeps(pg.app, pg.config), onPg.siteId!, back, { withSubmissions: true });
    const onLite = await importBundle(bundleDeps(lite.app, lite.config), back, {});
    const liteCopy = await clientFor(lite.app, onLite.siteId!);
    expect(await answersOf(liteCopy)).toEqual(answers);
    expect(await filesOf(lite.app, liteCopy)).toEqual(files);
    // The PostgreSQL copy's own bundle imported into it (a backup restored in place) finds nothing to do.
    const again = await importBundle(bundleDeps(pg.app, pg.config), back, { into: onPg.siteId! });
    expect(Object.values(again.groups).every((c) => c.created === 0 && c.updated === 0)).toBe(true);
  }, 120_000);
});
