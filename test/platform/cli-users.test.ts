import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../helpers/app.js';
import { client, expectErrorShape } from '../helpers/http.js';
import { useTestApp } from '../helpers/suite.js';

/**
 * The operator's commands of issue 30 item 5 (`tokens regenerate`, `users list|create|set-owner`,
 * `roles list`), run as the CLI runs: its own process on the database of a running app, through
 * the same services, skipping only the escalation checks (decisions U4).
 */
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const ctx = useTestApp();

/** The app's database for another process: on PostgreSQL its schema travels in the URL. */
function databaseUrl(): string {
  if (TEST_DIALECT === 'sqlite') return ctx.config.databaseUrl;
  const sep = ctx.config.databaseUrl.includes('?') ? '&' : '?';
  return `${ctx.config.databaseUrl}${sep}options=${encodeURIComponent(`-c search_path=${ctx.config.pgSchema}`)}`;
}

async function cli(...args: string[]) {
  return run(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli.ts'), ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl(), LOG_LEVEL: 'silent' },
  });
}
const json = async (...args: string[]) => JSON.parse((await cli(...args, '--json')).stdout);

/** The CLI's exit code and stderr for a command that must fail. */
async function failing(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await cli(...args);
  } catch (err: any) {
    return { code: err.code, stderr: err.stderr };
  }
  throw new Error(`cairn ${args.join(' ')} succeeded`);
}

describe('cairn users, roles and tokens regenerate (issue 30 item 5)', () => {
  it('creates and lists users, lists roles, moves ownership, regenerates a token', async () => {
    const api = await ctx.site();
    const site = api.siteId;

    const ann = await json('users', 'create', '--site', site, '--name', 'Ann Editor', '--email', 'Ann@Example.test', '--role', 'editor');
    expect(ann).toMatchObject({ fullName: 'Ann Editor', email: 'ann@example.test', role: { slug: 'editor' }, isOwner: false, isActive: true });
    expect((await api.get(`/v1/users/${ann.id}`)).body.data.role.slug).toBe('editor');
    const listed = await json('users', 'list', '--site', site);
    expect(listed.data.map((u: any) => [u.fullName, u.role.slug, u.isOwner])).toEqual([
      ['Site owner', 'owner', true],
      ['Ann Editor', 'editor', false],
    ]);
    const roles = await json('roles', 'list', '--site', site);
    expect(roles.data.map((r: any) => [r.slug, r.userCount])).toEqual([
      ['administrator', 0],
      ['author', 0],
      ['editor', 1],
      ['owner', 1],
      ['viewer', 0],
    ]);

    // The operator may give any scope; those outside the user's role stay inert, and the CLI says so.
    const made = await cli('tokens', 'create', '--site', site, '--user', ann.id, '--scopes', 'tags.view,users.view', '--json');
    const token = JSON.parse(made.stdout);
    expect(made.stderr).toContain('users.view');
    const annApi = client(ctx.app, token.token);
    expect((await annApi.get('/v1/tags')).status).toBe(200);
    expect((await annApi.get('/v1/users')).status).toBe(403);

    const regenerated = await json('tokens', 'regenerate', token.id);
    expect(regenerated).toMatchObject({ id: token.id, scopes: ['tags.view', 'users.view'], effectiveScopes: ['tags.view'] });
    expect(regenerated.token).not.toBe(token.token);
    // Another process changed the secret: this app refuses the old value on its next request
    // (SQLite: data_version; PostgreSQL: the notification, which may take a few milliseconds).
    const start = performance.now();
    let old = await annApi.get('/v1/tags');
    while (TEST_DIALECT === 'postgres' && old.status === 200 && performance.now() - start < 500) old = await annApi.get('/v1/tags');
    expect(old.status).toBe(401);
    expectErrorShape(old.body, 401, 'UNAUTHORIZED');
    expect((await client(ctx.app, regenerated.token).get('/v1/tags')).status).toBe(200);

    const owner = await json('users', 'set-owner', '--site', site, ann.id);
    expect(owner).toMatchObject({ id: ann.id, isOwner: true, role: { slug: 'owner' } });
    const after = (await api.get('/v1/users')).body.data.map((u: any) => [u.fullName, u.role.slug, u.isOwner]);
    expect(after).toEqual([
      ['Ann Editor', 'owner', true],
      ['Site owner', 'administrator', false],
    ]);
    // Her token now acts with every scope it holds.
    expect((await client(ctx.app, regenerated.token).get('/v1/users')).status).toBe(200);
  }, 120_000);

  it('validates as the API does: owner role, e-mail taken, unknown role, past expiry, unknown site or token', async () => {
    const api = await ctx.site();
    const site = api.siteId;
    await json('users', 'create', '--site', site, '--name', 'First', '--email', 'one@example.test');
    for (const [args, message] of [
      [['users', 'create', '--site', site, '--name', 'Second owner', '--role', 'owner'], 'owner role'],
      [['users', 'create', '--site', site, '--name', 'Same', '--email', 'ONE@example.test'], 'already used'],
      [['users', 'create', '--site', site, '--name', 'Ghost', '--role', 'wizard'], 'wizard'],
      [['tokens', 'create', '--site', site, '--scopes', 'tags.view', '--expires-at', '2020-01-01T00:00:00Z'], 'future'],
    ] as const) {
      const res = await failing(...args);
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr).toContain(message);
    }
    expect((await failing('roles', 'list', '--site', '00000000-0000-4000-8000-000000000000')).code).toBe(2);
    expect((await failing('tokens', 'regenerate', '00000000-0000-4000-8000-000000000000')).code).toBe(2);
    expect((await api.get('/v1/users')).body.meta.total).toBe(2);
  }, 120_000);
});
