import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createGunzip, createGzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type SiteClient } from '../../../test/helpers/suite.js';
import { answersOf, bundleDeps, clientFor, filesOf, fillSite, png, upload } from '../../../test/helpers/site-bundle.js';
import { multipartBody } from '../../../test/helpers/http.js';
import type { TestApp } from '../../../test/helpers/app.js';
import { BundleError, readAll, readTar, TarWriter } from './bundle-archive.js';
import { exportSite } from './bundles.export.js';
import { type ImportReport, importBundle } from './bundles.import.js';
import { purgeExpiredExports } from './bundles.service.js';

const ctx = useTestApp();
let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bundles-test-'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

const deps = (app: TestApp) => bundleDeps(app, ctx.config);

const file = (name: string) => path.join(dir, `${name}-${randomUUID().slice(0, 6)}.tar.gz`);

/** Every group of a report with nothing created or updated. */
const nothingToDo = (report: ImportReport) =>
  Object.entries(report.groups)
    .filter(([, c]) => c.created !== 0 || c.updated !== 0)
    .map(([g, c]) => `${g}: ${JSON.stringify(c)}`);

/** The archive's entries again, with `change` applied to each entry's bytes (a tampered copy). */
async function rewritten(from: string, change: (name: string, bytes: Buffer) => Buffer): Promise<string> {
  const to = file('tampered');
  const gzip = createGzip();
  gzip.pipe(createWriteStream(to));
  const tar = new TarWriter(gzip);
  for await (const entry of readTar(createReadStream(from).pipe(createGunzip()))) {
    const bytes = change(entry.name, await readAll(entry.body, 1 << 30));
    await tar.add(entry.name, bytes.length, [bytes]);
  }
  await tar.finish();
  await new Promise((r) => setTimeout(r, 20));
  return to;
}

describe('site bundles: export and import (issue 35, decisions BN1)', () => {
  let source: SiteClient;
  let bundle: string;
  let copyId: string;
  let first: ImportReport;

  it('round trip: a site with every group filled, imported into a new site, answers every list and detail the same and serves the same files', async () => {
    source = await ctx.site(['en', 'de']);
    const filled = await fillSite(ctx.app, source);
    bundle = file('site');
    const summary = await exportSite(deps(ctx.app), source.siteId, bundle, { withSubmissions: true });
    expect(summary.groups.contents).toEqual({ count: 3 });
    expect(summary.groups.tags).toEqual({ count: 3 });
    expect(summary.groups.form_submissions).toEqual({ count: 1 });
    // beach.png (900 px wide): original + 150, 400, 800; logo.png (40 px): original only.
    expect(summary.groups.files).toEqual({ count: 5 });

    first = await importBundle(deps(ctx.app), bundle, {});
    copyId = first.siteId!;
    expect(copyId).not.toBe(source.siteId);
    expect(first.groups.contents).toEqual({ created: 3, updated: 0, unchanged: 0 });
    expect(first.groups.categories).toEqual({ created: 2, updated: 0, unchanged: 0 });
    // The new site's five seeded roles are the bundle's (by slug: updated to its times), one more is made;
    // its owner is the bundle's owner (updated), the two other users are made.
    expect(first.groups.roles).toEqual({ created: 1, updated: 5, unchanged: 0 });
    expect(first.groups.users).toEqual({ created: 2, updated: 1, unchanged: 0 });
    expect(first.groups.files).toEqual({ created: 5, updated: 0, unchanged: 0 });

    const copy = await clientFor(ctx.app, copyId);
    const [before, after] = [await answersOf(source), await answersOf(copy)];
    for (const key of Object.keys(before)) expect(after[key], key).toEqual(before[key]);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(await filesOf(ctx.app, copy)).toEqual(await filesOf(ctx.app, source));

    // References point at the copy's own records.
    const post = (await copy.get(`/v1/contents/slug/${filled.post.slug}`)).body.data;
    const cats = (await copy.get('/v1/categories?limit=100')).body.data as Array<{ id: number; slug: string; parentId: number | null }>;
    expect(post.categories.map((c: { id: number }) => c.id).sort()).toEqual(cats.map((c) => c.id).sort());
    expect(cats.find((c) => c.slug === 'europe')!.parentId).toBe(cats.find((c) => c.slug === 'travel')!.id);
    const media = (await copy.get('/v1/media?limit=100')).body.data as Array<{ id: string; url: string; folderId: string | null }>;
    const photo = media.find((m) => m.url.endsWith('/beach.png'))!;
    expect(photo.url).toContain(`/files/${copyId}/${photo.id}/`);
    expect(post.bodyHtml).toContain(photo.url);
    expect(post.bodyHtml).not.toContain(source.siteId);
    const folders = (await copy.get('/v1/media-folders')).body.data as Array<{ id: string; name: string }>;
    expect(photo.folderId).toBe(folders.find((f) => f.name === 'Summer')!.id);
    expect((await copy.get(`/v1/media/${photo.id}/references`)).body.data).toHaveLength(
      (await source.get(`/v1/media/${filled.photo.id}/references`)).body.data.length,
    );
    const [revision] = (await ctx.app.database.db
      .selectFrom('content_revisions')
      .select('snapshot')
      .where('content_id', '=', post.id)
      .orderBy('id', 'desc')
      .limit(1)
      .execute()) as Array<{ snapshot: unknown }>;
    const snapshot = typeof revision!.snapshot === 'string' ? JSON.parse(revision!.snapshot) : revision!.snapshot;
    expect([...snapshot.categoryIds].sort()).toEqual(cats.map((c) => c.id).sort());
    const de = (await copy.get('/v1/contents?locale=de')).body.data[0];
    expect(de.translationGroup).toBe(post.translationGroup);
    expect((await copy.get(`/v1/contents/${post.id}/translations`)).body.data).toEqual({ en: { status: 'complete' }, de: { status: 'partial' } });
    const copiedForm = (await copy.get('/v1/forms')).body.data[0];
    const [submission] = (await copy.get(`/v1/forms/${copiedForm.id}/submissions`)).body.data;
    expect(submission).toMatchObject({ formId: copiedForm.id, ipAddress: null, data: { email: 'visitor@example.com' } });
    const block = (await copy.get('/v1/site-blocks/header')).body.data;
    expect(block.data.logo).toBe(photo.id);
    // No secret travelled: the webhook has a secret of its own, the captcha secret stayed behind.
    const [srcHook, copyHook] = await Promise.all(
      [source.siteId, copyId].map((s) => ctx.app.database.db.selectFrom('webhooks').select('secret').where('site_id', '=', s).executeTakeFirstOrThrow()),
    );
    expect(copyHook!.secret).not.toBe(srcHook!.secret);
    const spam = await ctx.app.database.db.selectFrom('spam_settings').select('captcha_secret').where('site_id', '=', copyId).executeTakeFirst();
    expect(spam?.captcha_secret ?? null).toBeNull();
  });

  it('a replaced file (its objects in a folder of their own, decisions HF8) travels: the copy and a restore in place serve the new bytes', async () => {
    const site = await ctx.site();
    const m = await upload(ctx.app, site, 'first.png', await png(300, 100));
    const { payload, headers } = multipartBody([{ name: 'file', filename: 'second.png', data: await png(900, 300, 30), type: 'image/png' }]);
    const replaced = await ctx.app.inject({
      method: 'POST',
      url: `/v1/media/${m.id}/replace`,
      payload,
      headers: { ...headers, authorization: `Bearer ${site.token}` },
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    const served = await filesOf(ctx.app, site);
    // The original and its variants 150, 400 and 800 wide (the 1200 one is the original: not upscaled).
    expect(served).toHaveLength(5);
    const out = file('replaced');
    expect((await exportSite(deps(ctx.app), site.siteId, out, {})).groups.files).toEqual({ count: 4 });
    const copy = await importBundle(deps(ctx.app), out, {});
    expect(copy.groups.files).toEqual({ created: 4, updated: 0, unchanged: 0 });
    expect(await filesOf(ctx.app, await clientFor(ctx.app, copy.siteId!))).toEqual(served);
    // In place, over the same records: nothing to write, the same bytes served.
    const again = await importBundle(deps(ctx.app), out, { into: site.siteId });
    expect(again.groups.files).toEqual({ created: 0, updated: 0, unchanged: 4 });
    expect(await filesOf(ctx.app, site)).toEqual(served);
  });

  it("never writes tokens, secrets or visitors' addresses into the bundle", async () => {
    const text: string[] = [];
    for await (const entry of readTar(createReadStream(bundle).pipe(createGunzip()))) {
      if (!entry.name.startsWith('files/')) text.push((await readAll(entry.body, 1 << 30)).toString('utf8'));
    }
    const all = text.join('\n');
    expect(all).not.toContain('s3cret');
    expect(all).not.toMatch(/whsec_|enc:v1:|secret_hash|ip_address/);
    expect(all).not.toContain(source.token);
  });

  it('a second import of the same bundle changes nothing', async () => {
    const before = await answersOf(await clientFor(ctx.app, copyId));
    const again = await importBundle(deps(ctx.app), bundle, { into: copyId });
    expect(nothingToDo(again)).toEqual([]);
    expect(again.groups.contents).toEqual({ created: 0, updated: 0, unchanged: 3 });
    expect(again.groups.files).toEqual({ created: 0, updated: 0, unchanged: 5 });
    expect(await answersOf(await clientFor(ctx.app, copyId))).toEqual(before);
    // No temporary file is left behind.
    expect(await ctx.app.storage.list('tmp/')).toEqual([]);
  });

  it('the dry run of a changed site says exactly what would change, per group, and writes nothing', async () => {
    const tag = (await source.get('/v1/tags?search=Food')).body.data[0];
    expect((await source.put(`/v1/tags/${tag.id}`, { name: 'Cuisine' })).status).toBe(200);
    expect((await source.post('/v1/categories', { name: 'Asia' })).status).toBe(201);
    const variable = (await source.get('/v1/variables')).body.data[0];
    expect((await source.put(`/v1/variables/${variable.id}`, { value: '+49 30 9999' })).status).toBe(200);
    const changed = file('changed');
    await exportSite(deps(ctx.app), source.siteId, changed, { withSubmissions: true });

    const copy = await clientFor(ctx.app, copyId);
    const before = await answersOf(copy);
    const dry = await importBundle(deps(ctx.app), changed, { into: copyId, dryRun: true });
    expect(dry.dryRun).toBe(true);
    const expected: Record<string, { created: number; updated: number }> = {
      tags: { created: 0, updated: 1 },
      categories: { created: 1, updated: 0 },
      variables: { created: 0, updated: 1 },
    };
    for (const [group, counts] of Object.entries(dry.groups)) {
      const want = expected[group] ?? { created: 0, updated: 0 };
      expect({ created: counts.created, updated: counts.updated }, group).toEqual(want);
      expect(counts.created + counts.updated + counts.unchanged, group).toBe(
        first.groups[group]!.created + first.groups[group]!.updated + first.groups[group]!.unchanged + (group === 'categories' ? 1 : 0),
      );
    }
    expect(await answersOf(copy)).toEqual(before);

    const real = await importBundle(deps(ctx.app), changed, { into: copyId });
    expect(real.groups).toEqual(dry.groups);
    expect((await copy.get('/v1/tags?search=Cuisine')).body.data).toHaveLength(1);
    expect(nothingToDo(await importBundle(deps(ctx.app), changed, { into: copyId }))).toEqual([]);
  });

  describe('refuses a bundle it cannot trust, before writing anything', () => {
    const refused = async (bundleFile: string, message: RegExp) => {
      const sites = await ctx.app.database.db
        .selectFrom('sites')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      const err = await importBundle(deps(ctx.app), bundleFile, {}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BundleError);
      expect((err as Error).message).toMatch(message);
      const after = await ctx.app.database.db
        .selectFrom('sites')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(sites.n));
      expect(await ctx.app.storage.list('tmp/')).toEqual([]);
    };

    it('a newer format', async () => {
      const newer = await rewritten(bundle, (name, bytes) =>
        name === 'manifest.json' ? Buffer.from(JSON.stringify({ ...JSON.parse(bytes.toString()), formatVersion: 2 })) : bytes,
      );
      await refused(newer, /format version 2 .*reads versions up to 1/);
    });

    it('a checksum mismatch in a group', async () => {
      const tampered = await rewritten(bundle, (name, bytes) =>
        name === 'data/tags.ndjson' ? Buffer.from(bytes.toString().replace('Beaches', 'Beachez')) : bytes,
      );
      await refused(tampered, /checksum mismatch in group tags/);
    });

    it('a checksum mismatch in a stored file', async () => {
      const tampered = await rewritten(bundle, (name, bytes) =>
        name.endsWith('/original') ? Buffer.concat([bytes.subarray(0, -1), Buffer.from([bytes.at(-1)! ^ 1])]) : bytes,
      );
      await refused(tampered, /checksum mismatch in files\//);
    });

    it('a damaged archive (cut short, or not a bundle at all)', async () => {
      const bytes = await fs.readFile(bundle);
      const cut = file('cut');
      await fs.writeFile(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
      await refused(cut, /damaged|ends/);
      const junk = file('junk');
      await fs.writeFile(junk, 'not a bundle');
      await refused(junk, /damaged/);
    });
  });
});

describe('POST /v1/site/export and GET /v1/site/export/:id (issue 35 item 4)', () => {
  it('queues an export, answers its status, then serves the bundle for an hour; the bundle imports', async () => {
    const api = await ctx.site();
    expect((await api.post('/v1/tags', { name: 'Exported' })).status).toBe(201);
    const started = await api.post('/v1/site/export', {});
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ data: { id: expect.any(String), status: 'queued' } });
    const id = started.body.data.id;
    const queued = await api.get(`/v1/site/export/${id}`);
    expect(queued.body.data).toMatchObject({ id, status: 'queued', downloadUrl: null, withSubmissions: false });
    const early = await api.get(`/v1/site/export/${id}?download=true`);
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('EXPORT_NOT_READY');

    await ctx.app.worker.runDueJobs();
    const ready = (await api.get(`/v1/site/export/${id}`)).body.data;
    expect(ready).toMatchObject({ status: 'ready', error: null, downloadUrl: `${ctx.config.publicUrl}/v1/site/export/${id}?download=true` });
    expect(Date.parse(ready.expiresAt) - Date.parse(ready.finishedAt)).toBe(60 * 60 * 1000);
    const download = await ctx.app.inject({ method: 'GET', url: `/v1/site/export/${id}?download=true`, headers: { authorization: `Bearer ${api.token}` } });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/gzip');
    expect(download.rawPayload.length).toBe(ready.bytes);
    const downloaded = file('downloaded');
    await fs.writeFile(downloaded, download.rawPayload);
    const imported = await importBundle(deps(ctx.app), downloaded, {});
    expect(imported.groups.tags).toEqual({ created: 1, updated: 0, unchanged: 0 });

    // Another site's export is the 404 of one that does not exist; without sites.manage, a 403.
    const other = await ctx.site();
    expect((await other.get(`/v1/site/export/${id}`)).status).toBe(404);
    expect((await other.get(`/v1/site/export/${id}?download=true`)).status).toBe(404);
  });

  it('answers 410 once the hour is over', async () => {
    const api = await ctx.site();
    const id = (await api.post('/v1/site/export', {})).body.data.id;
    await ctx.app.worker.runDueJobs();
    await ctx.app.database.db
      .updateTable('site_exports')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', id)
      .execute();
    expect((await api.get(`/v1/site/export/${id}`)).body.data).toMatchObject({ status: 'ready', downloadUrl: null });
    const late = await api.get(`/v1/site/export/${id}?download=true`);
    expect(late.status).toBe(410);
    expect(late.body.code).toBe('EXPORT_EXPIRED');
    // The purge task removes the expired bundle's file; the job stays readable.
    expect(await ctx.app.storage.list(`private/exports/${api.siteId}/`)).toEqual([`private/exports/${api.siteId}/${id}`]);
    expect(await purgeExpiredExports(ctx.app.database.db, ctx.app.storage)).toBe(1);
    expect(await ctx.app.storage.list(`private/exports/${api.siteId}/`)).toEqual([]);
    expect((await api.get(`/v1/site/export/${id}?download=true`)).status).toBe(410);
  });
});
