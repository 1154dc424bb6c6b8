import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/suite.js';

/**
 * Issue 36 item 13 (decisions HR4): a create cut off by a killed instance, between its commit
 * and its answer, is answered on the client's retry with the answer it would have had. The
 * instance is a child process on the test app's database, paused after the commit by the
 * test-only CAIRN_TEST_PAUSE_AFTER_COMMIT_MS, then killed with SIGKILL; the retry goes to
 * another instance (the test app) with the same key.
 */
const ctx = useTestApp();
const root = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-idem-kill-'));
let child: ChildProcess | undefined;

afterAll(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function startPausingInstance(): Promise<string> {
  child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test/fixtures/second-instance.ts')], {
    cwd: root,
    env: {
      ...process.env,
      SECOND_DATABASE_URL: ctx.config.databaseUrl,
      SECOND_PG_SCHEMA: ctx.config.pgSchema ?? '',
      SECOND_DATA_DIR: dataDir,
      CAIRN_TEST_PAUSE_AFTER_COMMIT_MS: '60000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child!.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!).port);
    });
    child!.on('exit', (code) => reject(new Error(`instance exited with ${code}`)));
  });
  return `http://127.0.0.1:${port}`;
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a create killed between commit and answer (issue 36 item 13)', () => {
  it('the retry with the same key answers the stored first answer, and there is one record', async () => {
    const api = await ctx.site();
    const base = await startPausingInstance();
    const body = { type: 'post', title: 'Cut off' };
    const cutOff = fetch(`${base}/v1/contents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json', 'idempotency-key': 'kill-1' },
      body: JSON.stringify(body),
    }).then(
      (res) => ({ answered: res.status }),
      (err: Error) => ({ failed: err.message }),
    );
    const db = ctx.app.database.db;
    // The write and its answer are committed; the instance now waits before answering.
    const stored = await waitFor(
      () => db.selectFrom('idempotency_keys').select(['body', 'status_code']).where('site_id', '=', api.siteId).where('key', '=', 'kill-1').executeTakeFirst(),
      30_000,
    );
    const exited = new Promise((r) => child!.once('exit', r));
    child!.kill('SIGKILL');
    await exited;
    expect(await cutOff).toMatchObject({ failed: expect.any(String) });

    const contents = await db.selectFrom('contents').select(['id', 'slug']).where('site_id', '=', api.siteId).execute();
    expect(contents).toHaveLength(1);
    const retry = await api.post('/v1/contents', body, { 'idempotency-key': 'kill-1' });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.text).toBe(stored.body);
    expect(retry.body.data).toMatchObject({ id: contents[0]!.id, slug: 'cut-off', title: 'Cut off' });
    expect(await db.selectFrom('contents').select('id').where('site_id', '=', api.siteId).execute()).toHaveLength(1);
  }, 60_000);
});
