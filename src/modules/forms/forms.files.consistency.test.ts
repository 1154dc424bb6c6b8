import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TestContext } from '../../../test/helpers/app.js';
import { failInsertsInto } from '../../../test/helpers/db-faults.js';
import { multipartBody } from '../../../test/helpers/http.js';
import { s3Endpoint } from '../../../test/helpers/s3.js';
import { S3_CALLS, useS3FaultApp } from '../../../test/helpers/s3-faults.js';
import { site } from '../../../test/helpers/suite.js';
import { SETTLE_FILES_AFTER_MS, SETTLE_FILES_JOB } from './forms.submissions.js';

/**
 * A submission and its files are never out of step (issue 36 item 1, as for media files): the
 * files are promoted before the row is committed, so a store that fails the promotion costs a 503
 * and leaves no submission (a retry is not a second one), and a commit that fails removes them.
 * The real client against radosgw, behind a proxy that fails the chosen calls.
 */
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(200)]);

describe.skipIf(!s3Endpoint())('form files on S3 (radosgw) behind a fault proxy', () => {
  const faulty = useS3FaultApp(2_000);

  async function setup(ctx: TestContext) {
    const api = await site(ctx.app);
    const form = (await api.post('/v1/forms', { name: 'Apply', status: 'active', schema: [{ name: 'photo', type: 'file', required: true }] })).body.data;
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const post = () => {
      const { payload, headers } = multipartBody([{ name: 'photo', filename: 'me.png', type: 'image/png', data: PNG }]);
      return ctx.app.inject({ method: 'POST', url: `/v1/public/forms/apply/submissions?siteKey=${key}`, payload, headers });
    };
    const state = async () => ({
      submissions: (await ctx.app.database.db.selectFrom('form_submissions').select('id').where('site_id', '=', api.siteId).execute()).length,
      count: (await api.get(`/v1/forms/${form.id}`)).body.data.submissionCount,
      files: await ctx.app.storage.list(`private/forms/${api.siteId}/`),
      pending: (await ctx.app.database.db.selectFrom('jobs').select('id').where('site_id', '=', api.siteId).where('type', '=', SETTLE_FILES_JOB).execute())
        .length,
    });
    return { post, state };
  }

  it('a promotion the store fails is a 503 with no submission and no file; the retry stores one submission with its file', async () => {
    const { ctx, proxy } = faulty;
    const { post, state } = await setup(ctx);
    proxy.inject(S3_CALLS.copyObject, '500');
    try {
      const res = await post();
      expect(res.statusCode, res.body).toBe(503);
    } finally {
      proxy.heal();
    }
    expect(await state()).toEqual({ submissions: 0, count: 0, files: [], pending: 0 });
    expect((await post()).statusCode).toBe(201);
    const after = await state();
    expect({ ...after, files: after.files.length }).toEqual({ submissions: 1, count: 1, files: 1, pending: 0 });
  });

  it('files promoted for a submission whose commit failed, and whose undo the store failed too, are removed by the pending job when due', async () => {
    const { ctx, proxy } = faulty;
    const { post, state } = await setup(ctx);
    const restore = await failInsertsInto(ctx.app.database.db, 'form_submissions');
    // The promotion passes (its DeleteObject is of a temporary key); the undo's deletes of the promoted file fail.
    proxy.inject((req) => S3_CALLS.deleteObject(req) && (req.url ?? '').includes('/private/forms/'), '500');
    try {
      expect((await post()).statusCode).toBe(500);
    } finally {
      proxy.heal();
      await restore();
    }
    const left = await state();
    expect({ ...left, files: left.files.length }).toEqual({ submissions: 0, count: 0, files: 1, pending: 1 });
    await ctx.app.worker.runDueJobs(new Date(Date.now() + SETTLE_FILES_AFTER_MS + 1_000));
    expect(await state()).toEqual({ submissions: 0, count: 0, files: [], pending: 0 });
  });
});
