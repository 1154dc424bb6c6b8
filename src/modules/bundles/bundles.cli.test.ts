import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../../../test/helpers/app.js';
import { useTestApp } from '../../../test/helpers/suite.js';

/**
 * `cairn sites export` and `cairn sites import` as an operator runs them (issue 35 items 1-3,
 * decisions BN1): their own process on the app's database and files, one JSON object with
 * --json, progress lines on stderr otherwise, exit code 1 and a message for a refused bundle.
 */
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../../..');
const ctx = useTestApp();

function databaseUrl(): string {
  if (TEST_DIALECT === 'sqlite') return ctx.config.databaseUrl;
  const sep = ctx.config.databaseUrl.includes('?') ? '&' : '?';
  return `${ctx.config.databaseUrl}${sep}options=${encodeURIComponent(`-c search_path=${ctx.config.pgSchema}`)}`;
}

const cli = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli.ts'), ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl(), CAIRN_DATA_DIR: ctx.config.dataDir, CAIRN_SECRET_KEY: 'a'.repeat(64), LOG_LEVEL: 'silent' },
  });

describe('cairn sites export / import', () => {
  it('exports, imports into a new site, reports nothing to do the second time, and refuses a damaged bundle with exit code 1', async () => {
    const api = await ctx.site();
    expect((await api.post('/v1/tags', { name: 'From the CLI' })).status).toBe(201);
    expect((await api.post('/v1/categories', { name: 'Guides' })).status).toBe(201);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-cli-bundle-'));
    const file = path.join(dir, 'site.tar.gz');

    const exported = JSON.parse((await cli('sites', 'export', api.siteId, '--out', file, '--json')).stdout);
    expect(exported).toMatchObject({ siteId: api.siteId, file, groups: { tags: { count: 1 }, categories: { count: 1 }, files: { count: 0 } } });

    const imported = JSON.parse((await cli('sites', 'import', file, '--new', '--name', 'Copy', '--domain', 'copy.test', '--json')).stdout);
    expect(imported).toMatchObject({
      dryRun: false,
      groups: { tags: { created: 1, updated: 0, unchanged: 0 }, categories: { created: 1, updated: 0, unchanged: 0 } },
    });
    const site = await ctx.app.database.db.selectFrom('sites').selectAll().where('id', '=', imported.siteId).executeTakeFirstOrThrow();
    expect([site.name, site.domain]).toEqual(['Copy', 'copy.test']);

    // Not a terminal: plain progress lines on stderr, the summary on stdout.
    const again = await cli('sites', 'import', file, '--into', imported.siteId, '--dry-run');
    expect(again.stdout).toMatch(/^Dry run: the import would change 0 records and files \(nothing was written\)\./);
    expect(again.stderr).toContain('tags: 1/1\n');

    await fs.writeFile(path.join(dir, 'broken.tar.gz'), (await fs.readFile(file)).subarray(0, 100));
    const refused = await cli('sites', 'import', path.join(dir, 'broken.tar.gz'), '--new').catch(
      (err: { code: number; stderr: string; stdout: string }) => err,
    );
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect((refused as { stderr: string }).stderr).toMatch(/^cairn: the archive is damaged/);
    const usage = await cli('sites', 'import', file).catch((err: { code: number; stderr: string }) => err);
    expect(usage).toMatchObject({ code: 1, stderr: 'cairn: give exactly one of --into <siteId> and --new\n' });
    await fs.rm(dir, { recursive: true, force: true });
  }, 120_000);
});
