import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken, TEST_DIALECT, type TestContext } from '../helpers/app.js';
import { type Client, client, expectErrorShape, multipartBody } from '../helpers/http.js';

/**
 * A real full disk: a small tmpfs mounted for the test (root is needed; where it cannot be
 * mounted the test says so and is skipped). On SQLite the database file is on it too; on
 * PostgreSQL only the files are (the database server's disk is not ours to fill).
 */
function mountTmpfs(megabytes: number): string | null {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir], { stdio: 'pipe' });
    return dir;
  } catch (err) {
    fs.rmdirSync(dir);
    console.warn(`disk-full test skipped: cannot mount a tmpfs (${(err as Error).message.split('\n')[0]})`);
    return null;
  }
}

/** Writes a filler file until the disk refuses (ENOSPC): from then on every new block fails. */
function fillDisk(dir: string): string {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}

const mounted = mountTmpfs(24);

describe.runIf(mounted)('a full disk (issue 36 item 7): 507 with the one error body, nothing half-written', () => {
  const dir = mounted as string;
  let ctx: TestContext;
  let api: Client;
  let token: string;
  let filler: string | null = null;

  beforeAll(async () => {
    ctx = await buildTestApp({
      dataDir: path.join(dir, 'data'),
      ...(TEST_DIALECT === 'sqlite' ? { databaseUrl: path.join(dir, 'cairn.db') } : {}),
    });
    token = (await createSiteWithToken(ctx.app)).token;
    api = client(ctx.app, token);
  });
  afterAll(async () => {
    await ctx?.close();
    execFileSync('umount', [dir]);
    fs.rmdirSync(dir);
  });

  const upload = async (data: Buffer) => {
    const { payload, headers } = multipartBody([{ name: 'file', filename: 'big.bin', data }]);
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', payload, headers: { ...headers, authorization: `Bearer ${token}` } });
    return { status: res.statusCode, body: res.json() };
  };

  it('an upload that finds the disk full is a 507, leaves no row and no file, and the next one after space is freed works', async () => {
    expect((await upload(Buffer.alloc(100_000, 7))).status).toBe(201);
    const filesBefore = await ctx.app.storage.list('');
    filler = fillDisk(dir);
    try {
      const full = await upload(Buffer.alloc(2_000_000, 7));
      expect(full.status).toBe(507);
      expectErrorShape(full.body, 507, 'STORAGE_FULL');
      expect((await api.get('/v1/media')).body.meta.total).toBe(1);
      expect(await ctx.app.storage.list('')).toEqual(filesBefore);
    } finally {
      fs.rmSync(filler);
    }
    expect((await upload(Buffer.alloc(2_000_000, 7))).status).toBe(201);
    expect((await api.get('/v1/media')).body.meta.total).toBe(2);
  });

  it.runIf(TEST_DIALECT === 'sqlite')(
    'a write SQLite cannot fit (SQLITE_FULL) is a 507, keeps nothing of itself, and reads go on',
    async () => {
      // 40 KB of text a post: well under the rendering process's threshold, and the WAL must grow.
      const text = 'lorem ipsum dolor sit amet '.repeat(1500);
      const created: number[] = [];
      filler = fillDisk(dir);
      let refused: { status: number; body: unknown } | null = null;
      try {
        // Writes go on while the WAL still has room; the first that needs a new block fails.
        for (let i = 0; i < 400 && !refused; i++) {
          const res = await api.post('/v1/contents', { title: `Post ${i}`, type: 'post', bodyMarkdown: text });
          if (res.status === 201) created.push(res.body.data.id);
          else refused = res;
        }
        expect(refused?.status, JSON.stringify(refused?.body)).toBe(507);
        expectErrorShape(refused?.body, 507, 'STORAGE_FULL');
        // Reads go on, and show exactly the posts that were acknowledged.
        const list = await api.get('/v1/contents?limit=100');
        expect(list.status).toBe(200);
        expect(list.body.meta.total).toBe(created.length);
        expect(await health()).toBe(200);
      } finally {
        fs.rmSync(filler);
      }
      const after = await api.post('/v1/contents', { title: 'After', type: 'post', bodyMarkdown: 'fits again' });
      expect(after.status).toBe(201);
      expect((await api.get('/v1/contents?limit=100')).body.meta.total).toBe(created.length + 1);
    },
    60_000,
  );

  const health = async () => (await ctx.app.inject({ method: 'GET', url: '/health' })).statusCode;
});
