import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { s3Endpoint } from '../../../test/helpers/s3.js';
import { bundleDeps, clientFor, filesOf, png, upload } from '../../../test/helpers/site-bundle.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { exportSite } from './bundles.export.js';
import { importBundle } from './bundles.import.js';

/** A bundle's files read from and placed into a real S3 bucket (radosgw), through the same storage interface. */
describe.skipIf(!s3Endpoint())('site bundles on S3 storage', () => {
  const ctx = useTestApp({}, {}, 's3');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-s3-bundle-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('exports the stored files from the bucket and imports them into a new site byte for byte, once', async () => {
    const source = await ctx.site();
    const photo = await upload(ctx.app, source, 'wide.png', await png(500, 200));
    expect((await source.post('/v1/contents', { type: 'post', title: 'With a photo', bodyMarkdown: `![x](${photo.url})` })).status).toBe(201);
    const file = path.join(dir, 'site.tar.gz');
    const summary = await exportSite(bundleDeps(ctx.app, ctx.config), source.siteId, file);
    expect(summary.groups.files).toEqual({ count: 3 }); // original, 150 and 400 px
    const first = await importBundle(bundleDeps(ctx.app, ctx.config), file, {});
    expect(first.groups.files).toEqual({ created: 3, updated: 0, unchanged: 0 });
    const copy = await clientFor(ctx.app, first.siteId!);
    expect(await filesOf(ctx.app, copy)).toEqual(await filesOf(ctx.app, source));
    const again = await importBundle(bundleDeps(ctx.app, ctx.config), file, { into: first.siteId! });
    expect(again.groups.files).toEqual({ created: 0, updated: 0, unchanged: 3 });
    expect(await ctx.app.storage.list('tmp/')).toEqual([]);
  });
});
