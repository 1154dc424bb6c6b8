import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTLE_AFTER_MS, SETTLE_JOB } from '../../src/modules/media/media.service.js';
import type { TestContext } from '../helpers/app.js';
import { multipartBody } from '../helpers/http.js';
import { s3Endpoint } from '../helpers/s3.js';
import { S3_CALLS, type S3Fault, type S3FaultProxy, useS3FaultApp } from '../helpers/s3-faults.js';
import { site } from '../helpers/suite.js';

/**
 * A store that takes the body and never answers (issue 36 item 1): every request to it has
 * S3_TIMEOUT_MS for its answer and is tried twice, so an upload, a promotion or a file URL answers
 * a clear 503 within about twice that, instead of holding the request for minutes; nothing is left
 * half-stored, and the service works again as soon as the store does. The real client against the
 * real server (radosgw), with a proxy between them that stalls the chosen calls.
 */
const TIMEOUT_MS = 1_000;
/** Two attempts of TIMEOUT_MS, the SDK's backoff between them, and a margin for a loaded machine. */
const BOUND_MS = 2 * TIMEOUT_MS + 3_000;

describe.skipIf(!s3Endpoint())('a stalled S3 store', () => {
  const faulty = useS3FaultApp(TIMEOUT_MS);
  let ctx: TestContext;
  let proxy: S3FaultProxy;
  beforeAll(() => {
    ({ ctx, proxy } = faulty);
  });

  async function upload(token: string) {
    const data = await sharp({ create: { width: 300, height: 20, channels: 3, background: 'teal' } })
      .png()
      .toBuffer();
    const { payload, headers } = multipartBody([{ name: 'file', filename: 'stalled.png', data }]);
    const started = Date.now();
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', payload, headers: { ...headers, authorization: `Bearer ${token}` } });
    return { status: res.statusCode, body: res.json(), took: Date.now() - started, retryAfter: res.headers['retry-after'] };
  }

  const rows = async (siteId: string) => (await ctx.app.database.db.selectFrom('media_files').select('id').where('site_id', '=', siteId).execute()).length;
  const siteKeys = async (siteId: string) => (await ctx.app.storage.list(`media/${siteId}/`)).length;

  for (const [call, matches] of [
    ['PutObject (the upload itself)', S3_CALLS.putObject],
    ['CopyObject (the promotion)', S3_CALLS.copyObject],
  ] as const) {
    for (const fault of ['stall', '500'] as S3Fault[]) {
      it(`${fault === 'stall' ? 'a stalled' : 'a failing'} ${call} answers 503 within ${BOUND_MS} ms with no row and no object; then it works again`, async () => {
        const api = await site(ctx.app);
        proxy.inject(matches, fault);
        let res: Awaited<ReturnType<typeof upload>>;
        try {
          res = await upload(api.token);
        } finally {
          proxy.heal();
        }
        expect(res.status, JSON.stringify(res.body)).toBe(503);
        expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
        if (fault === 'stall')
          expect(res.body.message).toBe(`File storage did not answer within ${TIMEOUT_MS} ms; retry after the number of seconds in Retry-After.`);
        expect(Number(res.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(res.took).toBeLessThan(BOUND_MS);
        expect(await rows(api.siteId)).toBe(0);
        expect(await siteKeys(api.siteId)).toBe(0);
        const again = await upload(api.token);
        expect(again.status, JSON.stringify(again.body)).toBe(201);
        expect(await rows(api.siteId)).toBe(1);
        // The original and its variants 150 wide (the image is 300 wide).
        expect(await siteKeys(api.siteId)).toBe(2);
      }, 30_000);
    }
  }

  it(`a file URL whose object the store never sends answers 503 within ${BOUND_MS} ms, and the file once it does`, async () => {
    const api = await site(ctx.app);
    const m = (await upload(api.token)).body.data;
    const url = new URL(m.url).pathname;
    proxy.inject(S3_CALLS.getObject, 'stall');
    const started = Date.now();
    let res: Awaited<ReturnType<typeof ctx.app.inject>>;
    try {
      res = await ctx.app.inject({ method: 'GET', url });
    } finally {
      proxy.heal();
    }
    expect(res.statusCode, res.body).toBe(503);
    expect(Date.now() - started).toBeLessThan(BOUND_MS);
    const served = await ctx.app.inject({ method: 'GET', url });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
  }, 30_000);
});

describe.skipIf(!s3Endpoint())('a process killed (SIGKILL) between promoting a new file and committing its row', () => {
  const faulty = useS3FaultApp(TIMEOUT_MS);
  const root = path.resolve(import.meta.dirname, '../..');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-killed-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  /** Another instance on the same database and bucket (through the proxy), in its own process. */
  async function otherInstance() {
    const { ctx, proxy } = faulty;
    const s3 = ctx.config.s3!;
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test/fixtures/second-instance.ts')], {
      cwd: root,
      env: {
        ...process.env,
        SECOND_DATABASE_URL: ctx.config.databaseUrl,
        SECOND_PG_SCHEMA: ctx.config.pgSchema ?? '',
        SECOND_DATA_DIR: dataDir,
        S3_BUCKET: s3.bucket,
        S3_ENDPOINT: proxy.endpoint,
        S3_ACCESS_KEY_ID: s3.accessKeyId!,
        S3_SECRET_ACCESS_KEY: s3.secretAccessKey!,
        S3_TIMEOUT_MS: '60000',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk) => {
        out += chunk;
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!).port);
      });
      child.on('exit', (code) => reject(new Error(`the other instance exited with ${code}`)));
    });
    return { child, base: `http://127.0.0.1:${port}` };
  }

  it('leaves the promoted objects and their pending job, which removes them when due; no row ever', async () => {
    const { ctx, proxy } = faulty;
    const api = await site(ctx.app);
    const { child, base } = await otherInstance();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // The first object is copied to its key; the delete of its temporary key never answers.
    proxy.inject((req) => S3_CALLS.deleteObject(req) && (req.url ?? '').includes('/tmp/'), 'stall');
    const data = await sharp({ create: { width: 300, height: 20, channels: 3, background: 'navy' } })
      .png()
      .toBuffer();
    const { payload, headers } = multipartBody([{ name: 'file', filename: 'killed.png', data }]);
    const answer = fetch(`${base}/v1/media/upload`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${api.token}` },
      body: new Uint8Array(payload),
    }).catch((err: Error) => err);
    for (let i = 0; i < 300 && proxy.faulted === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(proxy.faulted).toBe(1);
    child.kill('SIGKILL');
    await exited;
    expect(await answer).toBeInstanceOf(Error);
    proxy.heal();

    const db = ctx.app.database.db;
    const rows = async () => (await db.selectFrom('media_files').select('id').where('site_id', '=', api.siteId).execute()).length;
    const pending = async () =>
      (await db.selectFrom('jobs').select('payload').where('site_id', '=', api.siteId).where('type', '=', SETTLE_JOB).execute()).length;
    const keys = () => ctx.app.storage.list(`media/${api.siteId}/`);
    expect(await rows()).toBe(0);
    expect(await pending()).toBe(1);
    // The original reached its key before the process died.
    expect((await keys()).filter((k) => k.endsWith('/original'))).toHaveLength(1);
    await ctx.app.worker.runDueJobs(new Date(Date.now() + SETTLE_AFTER_MS + 1_000));
    expect(await keys()).toEqual([]);
    expect(await pending()).toBe(0);
    expect(await rows()).toBe(0);
  }, 60_000);
});
