import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestContext } from '../../../test/helpers/app.js';
import { failInsertsInto } from '../../../test/helpers/db-faults.js';
import { multipartBody } from '../../../test/helpers/http.js';
import { s3Endpoint } from '../../../test/helpers/s3.js';
import { S3_CALLS, type S3FaultProxy, useS3FaultApp } from '../../../test/helpers/s3-faults.js';
import { type SiteClient, site } from '../../../test/helpers/suite.js';
import { SETTLE_AFTER_MS, SETTLE_JOB } from './media.service.js';

/**
 * A media file and its row are never out of step (issue 36 item 1): the objects are promoted
 * before the row is committed, a failure on either side leaves neither (at once, or through the
 * pending job when the store fails again), and a row whose object is gone answers 404.
 */
const png = (width: number) =>
  sharp({ create: { width, height: 10, channels: 3, background: { r: 10, g: 120, b: 40 } } })
    .png()
    .toBuffer();

async function upload(ctx: TestContext, api: SiteClient, name: string, width = 500) {
  const { payload, headers } = multipartBody([{ name: 'file', filename: name, data: await png(width) }]);
  const res = await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
  return { status: res.statusCode, body: res.json() };
}

async function replace(ctx: TestContext, api: SiteClient, id: string, name: string, width: number) {
  const { payload, headers } = multipartBody([{ name: 'file', filename: name, data: await png(width) }]);
  const res = await ctx.app.inject({ method: 'POST', url: `/v1/media/${id}/replace`, payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
  return { status: res.statusCode, body: res.json() };
}

/** What a file is, by its row and by its URL: the row's width and name, the served ETag and the width of the bytes served (and of its 400 px variant). */
async function described(ctx: TestContext, api: SiteClient, id: string) {
  const row = (await ctx.app.inject({ method: 'GET', url: `/v1/media/${id}`, headers: { authorization: `Bearer ${api.token}` } })).json().data;
  const path = new URL(row.url).pathname;
  const file = await ctx.app.inject({ method: 'GET', url: path });
  const variant = await ctx.app.inject({ method: 'GET', url: `${path}?w=400`, headers: { accept: 'image/png' } });
  return {
    rowWidth: row.width,
    originalName: row.originalName,
    status: file.statusCode,
    servedWidth: file.statusCode === 200 ? (await sharp(file.rawPayload).metadata()).width : null,
    variantStatus: variant.statusCode,
    variantWidth: variant.statusCode === 200 ? (await sharp(variant.rawPayload).metadata()).width : null,
    etag: file.headers.etag,
  };
}

/** This site's rows, its stored keys and every temporary one, and the pending jobs of its new files. */
async function state(ctx: TestContext, siteId: string) {
  const db = ctx.app.database.db;
  return {
    rows: (await db.selectFrom('media_files').select('id').where('site_id', '=', siteId).execute()).length,
    keys: (await ctx.app.storage.list('')).filter((k) => k.startsWith(`media/${siteId}`) || k.startsWith('tmp/')),
    pending: (await db.selectFrom('jobs').select('id').where('site_id', '=', siteId).where('type', '=', SETTLE_JOB).execute()).length,
  };
}

/** Runs the jobs due `ms` from now. */
const runJobsIn = (ctx: TestContext, ms: number) => ctx.app.worker.runDueJobs(new Date(Date.now() + ms));

function sharedCases(open: () => TestContext) {
  it('a commit that fails after promotion leaves no objects, no row and no pending job', async () => {
    const ctx = open();
    const api = await site(ctx.app);
    const before = await state(ctx, api.siteId);
    const restore = await failInsertsInto(ctx.app.database.db, 'media_files');
    try {
      const res = await upload(ctx, api, 'doomed.png');
      expect(res.status).toBe(500);
    } finally {
      await restore();
    }
    expect(await state(ctx, api.siteId)).toEqual(before);
    expect((await upload(ctx, api, 'fine.png')).status).toBe(201);
    // One row; its original and its two variants narrower than 500 px (150, 400); no job left.
    const after = await state(ctx, api.siteId);
    expect({ ...after, keys: after.keys.length }).toEqual({ rows: 1, keys: 3, pending: 0 });
  });

  it('a replace whose commit fails after promotion leaves the row and its file as they were, and nothing new stored or pending', async () => {
    const ctx = open();
    const api = await site(ctx.app);
    const m = (await upload(ctx, api, 'kept.png', 500)).body.data;
    const before = await state(ctx, api.siteId);
    const file = await described(ctx, api, m.id);
    expect(file).toMatchObject({ rowWidth: 500, servedWidth: 500, variantWidth: 400 });
    // The replace's event is written in its transaction: the commit fails after the objects were promoted.
    const restore = await failInsertsInto(ctx.app.database.db, 'outbox_events');
    try {
      expect((await replace(ctx, api, m.id, 'wider.png', 1000)).status).toBe(500);
    } finally {
      await restore();
    }
    expect(await state(ctx, api.siteId)).toEqual(before);
    expect(await described(ctx, api, m.id)).toEqual(file);
  });

  it('a replace points the row at new objects and removes the replaced ones: nothing left over, nothing pending', async () => {
    const ctx = open();
    const api = await site(ctx.app);
    const m = (await upload(ctx, api, 'first.png', 500)).body.data;
    const res = await replace(ctx, api, m.id, 'second.png', 1000);
    expect(res.status).toBe(200);
    expect(await described(ctx, api, m.id)).toMatchObject({ rowWidth: 1000, originalName: 'second.png', status: 200, servedWidth: 1000, variantWidth: 400 });
    // The new original and its variants 150, 400 and 800 wide; the first file's three objects are gone.
    const after = await state(ctx, api.siteId);
    expect({ rows: after.rows, keys: after.keys.length, pending: after.pending }).toEqual({ rows: 1, keys: 4, pending: 0 });
    expect(after.keys.every((k) => k.startsWith(`media/${api.siteId}/${m.id}/r`))).toBe(true);
    // A second replace, back to a narrower image: again only its own objects are left.
    expect((await replace(ctx, api, m.id, 'third.png', 300)).status).toBe(200);
    expect(await described(ctx, api, m.id)).toMatchObject({ rowWidth: 300, servedWidth: 300 });
    const third = await state(ctx, api.siteId);
    expect({ rows: third.rows, keys: third.keys.length, pending: third.pending }).toEqual({ rows: 1, keys: 2, pending: 0 });
  });

  it('a row whose stored object is gone answers 404 on its URL, its variants and a range, never 500', async () => {
    const ctx = open();
    const api = await site(ctx.app);
    const m = (await upload(ctx, api, 'lost.png')).body.data;
    await ctx.app.storage.deletePrefix(`media/${api.siteId}/${m.id}`);
    const path = new URL(m.url).pathname;
    for (const [url, headers] of [
      [path, {}],
      [`${path}?w=400`, {}],
      [`${path}?w=150&h=5`, {}],
      [path, { range: 'bytes=0-9' }],
    ] as const) {
      const res = await ctx.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode, `${url} ${JSON.stringify(headers)}: ${res.body}`).toBe(404);
    }
  });
}

describe('on local disk', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await buildTestApp();
  });
  afterAll(() => ctx.close());
  sharedCases(() => ctx);

  it('a promotion that fails answers an error and leaves no row and no object; the retry makes one row', async () => {
    const api = await site(ctx.app);
    // The site's media directory cannot be made: a file stands where it goes.
    const blocker = path.join(ctx.config.dataDir, 'files', 'media', api.siteId);
    fs.mkdirSync(path.dirname(blocker), { recursive: true });
    fs.writeFileSync(blocker, 'in the way');
    const res = await upload(ctx, api, 'first.png');
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/media', headers: { authorization: `Bearer ${api.token}` } })).json().meta.total).toBe(0);
    expect(await state(ctx, api.siteId)).toEqual({ rows: 0, keys: [`media/${api.siteId}`], pending: 0 });
    fs.rmSync(blocker);
    expect((await upload(ctx, api, 'first.png')).status).toBe(201);
    expect((await state(ctx, api.siteId)).rows).toBe(1);
  });

  it('a replace whose promotion fails answers an error and leaves the row and its file as they were; the retry replaces', async () => {
    const api = await site(ctx.app);
    const m = (await upload(ctx, api, 'kept.png', 500)).body.data;
    const before = await state(ctx, api.siteId);
    const file = await described(ctx, api, m.id);
    // The disk refuses the second object's rename (the original went through).
    const storage = ctx.app.storage;
    const promote = storage.promote;
    let calls = 0;
    storage.promote = async (tempKey, key) => {
      if (++calls === 2) throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
      return promote.call(storage, tempKey, key);
    };
    try {
      expect((await replace(ctx, api, m.id, 'wider.png', 1000)).status).toBeGreaterThanOrEqual(500);
    } finally {
      storage.promote = promote;
    }
    expect(calls).toBe(2);
    expect(await state(ctx, api.siteId)).toEqual(before);
    expect(await described(ctx, api, m.id)).toEqual(file);
    expect((await replace(ctx, api, m.id, 'wider.png', 1000)).status).toBe(200);
    expect(await described(ctx, api, m.id)).toMatchObject({ rowWidth: 1000, servedWidth: 1000, variantWidth: 400 });
  });
});

describe.skipIf(!s3Endpoint())('on S3 (radosgw) behind a fault proxy', () => {
  const faulty = useS3FaultApp(2_000);
  let ctx: TestContext;
  let proxy: S3FaultProxy;
  beforeAll(() => {
    ({ ctx, proxy } = faulty);
  });
  sharedCases(() => ctx);

  for (const fault of ['500', 'reset'] as const) {
    it(`a promotion the store fails (${fault} to CopyObject) is a 503 with no row and no object; the retry makes one row`, async () => {
      const api = await site(ctx.app);
      const before = await state(ctx, api.siteId);
      proxy.inject(S3_CALLS.copyObject, fault);
      try {
        const res = await upload(ctx, api, 'copy-fails.png');
        expect(res.status, JSON.stringify(res.body)).toBe(503);
        expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
      } finally {
        proxy.heal();
      }
      expect(proxy.faulted).toBeGreaterThan(0);
      // Nothing listed, nothing stored (the temporary objects are discarded too), nothing pending.
      expect(await state(ctx, api.siteId)).toEqual(before);
      expect((await upload(ctx, api, 'copy-fails.png')).status).toBe(201);
      expect((await state(ctx, api.siteId)).rows).toBe(before.rows + 1);
    });
  }

  for (const fault of ['500', 'reset'] as const) {
    it(`a replace whose promotion the store fails (${fault} to CopyObject) is a 503; the row and its file are as before; the retry replaces`, async () => {
      const api = await site(ctx.app);
      const m = (await upload(ctx, api, 'kept.png', 500)).body.data;
      const before = await state(ctx, api.siteId);
      const file = await described(ctx, api, m.id);
      // The first copy (the new original) goes through, the second (a variant) fails.
      let copies = 0;
      proxy.inject((req) => S3_CALLS.copyObject(req) && ++copies > 1, fault);
      try {
        const res = await replace(ctx, api, m.id, 'wider.png', 1000);
        expect(res.status, JSON.stringify(res.body)).toBe(503);
        expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
      } finally {
        proxy.heal();
      }
      expect(proxy.faulted).toBeGreaterThan(0);
      expect(await state(ctx, api.siteId)).toEqual(before);
      expect(await described(ctx, api, m.id)).toEqual(file);
      expect((await replace(ctx, api, m.id, 'wider.png', 1000)).status).toBe(200);
      expect(await described(ctx, api, m.id)).toMatchObject({ rowWidth: 1000, servedWidth: 1000, variantWidth: 400 });
      expect(await state(ctx, api.siteId)).toMatchObject({ rows: before.rows, pending: 0 });
    });
  }

  it("when the store fails while a replace undoes its promotion, the pending job removes the new objects later and keeps the row's", async () => {
    const api = await site(ctx.app);
    const m = (await upload(ctx, api, 'kept.png', 500)).body.data;
    const file = await described(ctx, api, m.id);
    const restore = await failInsertsInto(ctx.app.database.db, 'outbox_events');
    // Promotion succeeds, the commit fails, and the undo's listing and delete fail too.
    proxy.inject((req) => (req.method === 'GET' && (req.url ?? '').includes('list-type')) || req.method === 'POST', '500');
    try {
      expect((await replace(ctx, api, m.id, 'stuck.png', 1000)).status).toBe(500);
    } finally {
      proxy.heal();
      await restore();
    }
    const left = await state(ctx, api.siteId);
    // The row's three objects and the replace's four (the original, 150, 400, 800), one job pending.
    expect({ rows: left.rows, keys: left.keys.length, pending: left.pending }).toEqual({ rows: 1, keys: 7, pending: 1 });
    expect(await described(ctx, api, m.id)).toEqual(file);
    await runJobsIn(ctx, 0);
    expect(await state(ctx, api.siteId)).toEqual(left);
    await runJobsIn(ctx, SETTLE_AFTER_MS + 1000);
    const after = await state(ctx, api.siteId);
    expect({ rows: after.rows, keys: after.keys.length, pending: after.pending }).toEqual({ rows: 1, keys: 3, pending: 0 });
    expect(await described(ctx, api, m.id)).toEqual(file);
  });

  it('when the store fails to remove the replaced objects, the replace stands and the job removes them', async () => {
    const api = await site(ctx.app);
    const m = (await upload(ctx, api, 'old.png', 500)).body.data;
    // Deletes of the first file's objects (in the file's own folder) fail.
    proxy.inject((req) => S3_CALLS.deleteObject(req) && new RegExp(`/${m.id}/(original|w\\d+)$`).test((req.url ?? '').split('?')[0]!), '500');
    try {
      expect((await replace(ctx, api, m.id, 'new.png', 1000)).status).toBe(200);
    } finally {
      proxy.heal();
    }
    expect(proxy.faulted).toBeGreaterThan(0);
    expect(await described(ctx, api, m.id)).toMatchObject({ rowWidth: 1000, servedWidth: 1000, variantWidth: 400 });
    const left = await state(ctx, api.siteId);
    expect({ rows: left.rows, keys: left.keys.length, pending: left.pending }).toEqual({ rows: 1, keys: 7, pending: 1 });
    // Due at once: the next run of the worker removes them.
    await runJobsIn(ctx, 0);
    const after = await state(ctx, api.siteId);
    expect({ rows: after.rows, keys: after.keys.length, pending: after.pending }).toEqual({ rows: 1, keys: 4, pending: 0 });
    expect(await described(ctx, api, m.id)).toMatchObject({ rowWidth: 1000, servedWidth: 1000 });
  });

  it('when the store fails again while undoing, the pending job removes the promoted objects later', async () => {
    const api = await site(ctx.app);
    const restore = await failInsertsInto(ctx.app.database.db, 'media_files');
    // Promotion succeeds, the commit fails, and the undo's listing and delete fail too.
    // (Promotion's own DeleteObject of each temporary key passes; the undo lists, then deletes in one POST.)
    proxy.inject((req) => (req.method === 'GET' && (req.url ?? '').includes('list-type')) || req.method === 'POST', '500');
    try {
      expect((await upload(ctx, api, 'stuck.png')).status).toBe(500);
    } finally {
      proxy.heal();
      await restore();
    }
    const left = await state(ctx, api.siteId);
    expect(left.rows).toBe(0);
    expect(left.pending).toBe(1);
    // The original and its variants 150 and 400 wide.
    expect(left.keys).toHaveLength(3);
    // Not due before its time (an upload still running on another instance keeps its objects).
    await runJobsIn(ctx, 0);
    expect(await state(ctx, api.siteId)).toEqual(left);
    await runJobsIn(ctx, SETTLE_AFTER_MS + 1000);
    const after = await state(ctx, api.siteId);
    expect(after).toEqual({ rows: 0, keys: [], pending: 0 });
  });
});
