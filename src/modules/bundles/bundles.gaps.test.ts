import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartBody } from '../../../test/helpers/http.js';
import { bundleDeps, clientFor } from '../../../test/helpers/site-bundle.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { parseJson } from '../../db/json.js';
import { exportSite } from './bundles.export.js';
import { importBundle } from './bundles.import.js';
import { failInterruptedExports, INTERRUPTED } from './bundles.service.js';

/**
 * What issue 35 still lacked: dataSource filters on the target's ids, files of form submissions,
 * export jobs whose process died, and the one `site.imported` event of an import (decisions BX9-BX13).
 */
const ctx = useTestApp();
let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bundle-gaps-'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));
const file = (name: string) => path.join(dir, `${name}-${randomUUID().slice(0, 6)}.tar.gz`);
const deps = () => bundleDeps(ctx.app, ctx.config);

describe('dataSource filters of site blocks are translated (decisions BX9)', () => {
  it("a block listing category A's contents lists the copy's category A, in the schema and in the published snapshot", async () => {
    const api = await ctx.site();
    expect((await api.put('/v1/site-blocks/settings', { stagedPublishing: true })).status).toBe(200);
    const other = (await api.post('/v1/categories', { name: 'Other' })).body.data;
    const news = (await api.post('/v1/categories', { name: 'News' })).body.data;
    const tag = (await api.post('/v1/tags', { name: 'Hot' })).body.data;
    expect((await api.post('/v1/contents', { type: 'post', title: 'In news', status: 'published', categoryIds: [news.id], tagIds: [tag.id] })).status).toBe(
      201,
    );
    expect((await api.post('/v1/contents', { type: 'post', title: 'Elsewhere', status: 'published', categoryIds: [other.id] })).status).toBe(201);
    const created = await api.post('/v1/site-blocks', {
      name: 'Latest',
      type: 'global',
      schema: [
        { name: 'title', type: 'string' },
        { name: 'posts', type: 'dataSource', source: 'contents', filters: { categoryIds: [news.id], tagIds: [tag.id] }, limit: 5 },
        { name: 'sections', type: 'dataSource', source: 'categories', filters: { parentId: 'null', ids: [news.id] } },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await api.post('/v1/site-blocks/latest/publish')).status).toBe(200);

    const bundle = file('datasource');
    await exportSite(deps(), api.siteId, bundle);
    const report = await importBundle(deps(), bundle, {});
    const copy = await clientFor(ctx.app, report.siteId!);
    const cats = (await copy.get('/v1/categories?limit=100')).body.data as Array<{ id: number; slug: string }>;
    const copyNews = cats.find((c) => c.slug === 'news')!.id;
    const copyTag = (await copy.get('/v1/tags')).body.data[0].id;
    expect(copyNews).not.toBe(news.id);

    const block = (await copy.get('/v1/site-blocks/latest')).body.data;
    expect(block.schema[1].filters).toEqual({ categoryIds: [copyNews], tagIds: [copyTag] });
    expect(block.schema[2].filters).toEqual({ parentId: 'null', ids: [copyNews] });
    expect(block.data.posts.map((p: { title: string }) => p.title)).toEqual(['In news']);
    expect(block.data.sections.map((c: { slug: string }) => c.slug)).toEqual(['news']);
    const row = await ctx.app.database.db
      .selectFrom('site_blocks')
      .select('published_snapshot')
      .where('site_id', '=', report.siteId!)
      .where('slug', '=', 'latest')
      .executeTakeFirstOrThrow();
    const snapshot = parseJson<{ schema: Array<{ filters?: unknown }> }>(row.published_snapshot, { schema: [] });
    expect(snapshot.schema[1]!.filters).toEqual({ categoryIds: [copyNews], tagIds: [copyTag] });

    // The same bundle again: nothing to do (the translated filters compare equal).
    const again = await importBundle(deps(), bundle, { into: report.siteId! });
    expect(again.groups.site_blocks).toEqual({ created: 0, updated: 0, unchanged: 1 });
  });
});

describe('files of form submissions travel with --with-submissions (decisions BX11)', () => {
  it('exports them, imports them under the copy’s form after the commit, and a second import changes nothing', async () => {
    const api = await ctx.site();
    const form = (
      await api.post('/v1/forms', {
        name: 'Apply',
        status: 'active',
        schema: [
          { name: 'name', type: 'text', required: true },
          { name: 'photo', type: 'file', validation: { accept: ['image/*'] } },
        ],
      })
    ).body.data;
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(300)]);
    const { payload, headers } = multipartBody([
      { name: 'name', value: 'Ada' },
      { name: 'photo', filename: 'me.png', type: 'image/png', data: PNG },
    ]);
    const sent = await ctx.app.inject({ method: 'POST', url: `/v1/public/forms/apply/submissions?siteKey=${key}`, payload, headers });
    expect(sent.statusCode, sent.body).toBe(201);
    const [original] = (await api.get(`/v1/forms/${form.id}/submissions`)).body.data;

    const bundle = file('submission-files');
    const summary = await exportSite(deps(), api.siteId, bundle, { withSubmissions: true });
    expect(summary.groups.files).toEqual({ count: 1 });
    // Without submissions, no file of theirs.
    expect((await exportSite(deps(), api.siteId, file('without'), {})).groups.files).toEqual({ count: 0 });

    const dry = await importBundle(deps(), bundle, { dryRun: true });
    expect(dry.groups.files).toEqual({ created: 1, updated: 0, unchanged: 0 });
    const report = await importBundle(deps(), bundle, {});
    expect(report.groups.files).toEqual({ created: 1, updated: 0, unchanged: 0 });
    const copy = await clientFor(ctx.app, report.siteId!);
    const copyForm = (await copy.get('/v1/forms')).body.data[0];
    expect(copyForm.id).not.toBe(form.id);
    const [submission] = (await copy.get(`/v1/forms/${copyForm.id}/submissions`)).body.data;
    expect(submission.data.photo).toEqual(original.data.photo);
    const download = await copy.get(`/v1/forms/${copyForm.id}/submissions/${submission.id}/files/${submission.data.photo.fileId}`);
    expect(download.status).toBe(200);
    expect(download.headers['content-type']).toBe('image/png');
    expect(Number(download.headers['content-length'])).toBe(PNG.length);
    const stored = await ctx.app.storage.read(`private/forms/${report.siteId}/${copyForm.id}/${submission.data.photo.fileId}`);
    const chunks: Buffer[] = [];
    for await (const chunk of stored!.stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(PNG)).toBe(true);
    expect(await ctx.app.storage.list(`private/forms/${report.siteId}/`)).toEqual([
      `private/forms/${report.siteId}/${copyForm.id}/${submission.data.photo.fileId}`,
    ]);

    const again = await importBundle(deps(), bundle, { into: report.siteId! });
    expect(again.groups.files).toEqual({ created: 0, updated: 0, unchanged: 1 });
    expect(again.groups.form_submissions).toEqual({ created: 0, updated: 0, unchanged: 1 });
    // A file the target lost is written again by the next import.
    await ctx.app.storage.delete(`private/forms/${report.siteId}/${copyForm.id}/${submission.data.photo.fileId}`);
    expect((await importBundle(deps(), bundle, { into: report.siteId! })).groups.files).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect(await ctx.app.storage.list('tmp/')).toEqual([]);
  });
});

describe('an export whose process died ends failed (decisions BX13)', () => {
  const stuck = async (siteId: string, id: string, heartbeatAgoMs: number | null) =>
    ctx.app.database.db
      .updateTable('site_exports')
      .set({ status: 'running', heartbeat_at: heartbeatAgoMs === null ? null : new Date(Date.now() - heartbeatAgoMs).toISOString() })
      .where('site_id', '=', siteId)
      .where('id', '=', id)
      .execute();

  it('the job run again after a crash fails it with a clear message; a new export then succeeds', async () => {
    const api = await ctx.site();
    const id = (await api.post('/v1/site/export', {})).body.data.id;
    // The process died while writing it: the row says running, the heartbeat is 2 minutes old,
    // and the jobs module hands the job out again.
    await stuck(api.siteId, id, 120_000);
    await ctx.app.worker.runDueJobs();
    expect((await api.get(`/v1/site/export/${id}`)).body.data).toMatchObject({ status: 'failed', error: INTERRUPTED, downloadUrl: null });
    expect((await api.get(`/v1/site/export/${id}?download=true`)).status).toBe(409);

    const next = (await api.post('/v1/site/export', {})).body.data.id;
    await ctx.app.worker.runDueJobs();
    expect((await api.get(`/v1/site/export/${next}`)).body.data).toMatchObject({ status: 'ready', error: null });
  });

  it('the sweep at the worker’s start fails exports without a heartbeat for a minute, not live ones', async () => {
    const api = await ctx.site();
    const [dead, old, live] = [
      (await api.post('/v1/site/export', {})).body.data.id,
      (await api.post('/v1/site/export', {})).body.data.id,
      (await api.post('/v1/site/export', {})).body.data.id,
    ];
    await ctx.app.database.db.deleteFrom('jobs').where('site_id', '=', api.siteId).execute();
    await stuck(api.siteId, dead, 61_000);
    await stuck(api.siteId, old, null); // running before heartbeats existed
    await stuck(api.siteId, live, 5_000);
    expect(await failInterruptedExports(ctx.app.database.db)).toBe(2);
    const status = async (id: string) => (await api.get(`/v1/site/export/${id}`)).body.data;
    expect(await status(dead)).toMatchObject({ status: 'failed', error: INTERRUPTED });
    expect((await status(dead)).finishedAt).not.toBeNull();
    expect(await status(old)).toMatchObject({ status: 'failed', error: INTERRUPTED });
    expect(await status(live)).toMatchObject({ status: 'running', error: null });
    expect(await failInterruptedExports(ctx.app.database.db)).toBe(0);
  });
});

describe('an import announces itself with one site.imported event (decisions BX12)', () => {
  const eventsOf = async (siteId: string) =>
    (await ctx.app.database.db.selectFrom('outbox_events').select(['type', 'payload']).where('site_id', '=', siteId).orderBy('id').execute()).map((e) => ({
      type: e.type,
      data: parseJson<Record<string, unknown>>(e.payload, {}),
    }));

  it('one summary event for an import that changed something; none for a dry run or an import that changed nothing', async () => {
    const api = await ctx.site();
    for (const title of ['One', 'Two', 'Three']) expect((await api.post('/v1/contents', { type: 'post', title, status: 'published' })).status).toBe(201);
    expect((await api.post('/v1/tags', { name: 'Hot' })).status).toBe(201);
    const bundle = file('events');
    const exported = await exportSite(deps(), api.siteId, bundle);

    const dry = await importBundle(deps(), bundle, { dryRun: true });
    expect(dry.siteId).toBeNull();
    const target = await ctx.site();
    await ctx.app.database.db.deleteFrom('outbox_events').where('site_id', '=', target.siteId).execute();
    await importBundle(deps(), bundle, { into: target.siteId, dryRun: true });
    expect(await eventsOf(target.siteId)).toEqual([]);

    const report = await importBundle(deps(), bundle, { into: target.siteId });
    const events = await eventsOf(target.siteId);
    expect(events.map((e) => e.type)).toEqual(['site.imported']);
    const total = (what: 'created' | 'updated' | 'unchanged') =>
      Object.values(report.groups)
        .filter((_, i) => Object.keys(report.groups)[i] !== 'files')
        .reduce((n, c) => n + c[what], 0);
    expect(events[0]!.data).toMatchObject({
      sourceSiteId: api.siteId,
      formatVersion: 1,
      created: total('created'),
      updated: total('updated'),
      unchanged: total('unchanged'),
    });
    expect((events[0]!.data.groups as Record<string, unknown>).contents).toEqual({ created: 3, updated: 0, unchanged: 0 });
    expect((events[0]!.data.groups as Record<string, unknown>).tags).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect(events[0]!.data.bundleCreatedAt).toEqual(expect.any(String));
    expect(exported.groups.contents).toEqual({ count: 3 });

    await importBundle(deps(), bundle, { into: target.siteId });
    expect((await eventsOf(target.siteId)).length).toBe(1);
  });
});
