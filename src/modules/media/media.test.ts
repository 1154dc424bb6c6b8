import { randomBytes } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { allScopesExcept, createTokenFor } from '../../../test/helpers/app.js';
import { type Client, client, expect422, expectErrorShape, multipartBody } from '../../../test/helpers/http.js';
import { incompleteUploads, s3Endpoint } from '../../../test/helpers/s3.js';
import { useTestApp } from '../../../test/helpers/suite.js';

// Every test runs on local disk and on a real S3 server (radosgw, test/setup/radosgw.ts).
for (const storage of ['local', 's3'] as const) {
  describe.skipIf(storage === 's3' && !s3Endpoint())(`media on ${storage === 'local' ? 'local disk' : 'S3'}`, () => {
    const ctx = useTestApp({}, {}, storage);

    async function upload(api: Client & { token: string }, filename: string, data: Buffer, fields: Record<string, string> = {}) {
      const { payload, headers } = multipartBody([...Object.entries(fields).map(([name, value]) => ({ name, value })), { name: 'file', filename, data }]);
      const res = await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
      return { status: res.statusCode, body: res.json() };
    }

    /** The served bytes of a URL (absolute, on PUBLIC_URL). */
    async function fetchFile(url: string, headers: Record<string, string> = {}) {
      const res = await ctx.app.inject({ method: 'GET', url: new URL(url).pathname + new URL(url).search, headers });
      return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
    }

    const png = (width: number, height: number) =>
      sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 40 } } })
        .png()
        .toBuffer();

    /** Every stored key (temporary ones too), on whichever storage the app has. */
    const stored = () => ctx.app.storage.list('');
    const rowCount = async () => (await ctx.app.database.db.selectFrom('media_files').select('id').execute()).length;
    const outboxCount = async () => (await ctx.app.database.db.selectFrom('outbox_events').select('id').execute()).length;

    describe('media uploads (decisions M1, M5, M8)', () => {
      it('stores an image with its size and four variants, never wider than it, served with ETag, 304 and Range', async () => {
        const api = await ctx.site();
        const res = await upload(api, 'Big Photo.PNG', await png(2000, 1000), { alt: 'A red field', title: 'Red' });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        const m = res.body.data;
        expect(m).toMatchObject({
          filename: 'big-photo.png',
          originalName: 'Big Photo.PNG',
          mimeType: 'image/png',
          width: 2000,
          height: 1000,
          alt: 'A red field',
          title: 'Red',
          folderId: null,
        });
        expect(m.url).toBe(`${ctx.config.mediaPublicUrl}/files/${api.siteId}/${m.id}/big-photo.png`);
        expect(m.variants).toEqual({ thumbnail: `${m.url}?w=150`, card: `${m.url}?w=400`, content: `${m.url}?w=800`, medium: `${m.url}?w=1200` });
        for (const w of [150, 400, 800, 1200]) {
          const file = await fetchFile(`${m.url}?w=${w}`);
          expect(file.status).toBe(200);
          expect((await sharp(file.body).metadata()).width).toBe(w);
        }
        const original = await fetchFile(m.url);
        expect(original.headers['content-type']).toBe('image/png');
        expect(original.headers['cache-control']).toMatch(/^public, max-age=\d+/);
        expect((await sharp(original.body).metadata()).width).toBe(2000);
        expect(original.body.length).toBe(m.size);
        expect((await fetchFile(m.url, { 'if-none-match': String(original.headers.etag) })).status).toBe(304);
        const range = await fetchFile(m.url, { range: 'bytes=0-7' });
        expect(range.status).toBe(206);
        expect(range.headers['content-range']).toBe(`bytes 0-7/${m.size}`);
        expect(range.body).toEqual(original.body.subarray(0, 8));
        // Served again (from memory now): the same bytes.
        expect((await fetchFile(m.url)).body.equals(original.body)).toBe(true);
        expect((await fetchFile(m.url, { range: `bytes=${m.size + 10}-` })).status).toBe(416);
        expect((await fetchFile(`${m.url}?w=300`)).status).toBe(400);
        expect((await fetchFile(m.url.replace('big-photo.png', 'other.png'))).status).toBe(404);
        // A small image is never upscaled: its 1200 variant is itself.
        const small = (await upload(api, 'small.png', await png(300, 200))).body.data;
        expect((await sharp((await fetchFile(`${small.url}?w=1200`)).body).metadata()).width).toBe(300);
        const detail = await api.get(`/v1/media/${m.id}`);
        expect(detail.body.data).toMatchObject({ id: m.id, folder: null, references: { contents: 0, siteBlocks: 0 } });
      });

      it('applies the EXIF orientation, drops location metadata, and takes maxWidth, quality and optimize', async () => {
        const api = await ctx.site();
        const jpeg = await sharp({ create: { width: 400, height: 200, channels: 3, background: 'blue' } })
          .jpeg()
          .withMetadata({ orientation: 6 })
          .withExifMerge({ IFD0: { Make: 'Camera' }, IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1' } })
          .toBuffer();
        expect((await sharp(jpeg).metadata()).exif).toBeDefined();
        expect((await sharp(jpeg).metadata()).orientation).toBe(6);
        const m = (await upload(api, 'phone.jpg', jpeg)).body.data;
        expect(m).toMatchObject({ mimeType: 'image/jpeg', width: 200, height: 400 });
        const meta = await sharp((await fetchFile(m.url)).body).metadata();
        expect(meta.exif).toBeUndefined();
        expect(meta.orientation).toBeUndefined();
        const narrowed = (await upload(api, 'wide.png', await png(1600, 800), { maxWidth: '500', optimize: 'true', quality: '60' })).body.data;
        expect(narrowed).toMatchObject({ mimeType: 'image/webp', filename: 'wide.webp', width: 500, height: 250 });
        expect((await sharp((await fetchFile(narrowed.url)).body).metadata()).format).toBe('webp');
        for (const [fields, field] of [
          [{ maxWidth: '99' }, 'maxWidth'],
          [{ maxWidth: '4001' }, 'maxWidth'],
          [{ quality: '49' }, 'quality'],
          [{ quality: '101' }, 'quality'],
          [{ optimize: 'maybe' }, 'optimize'],
        ] as Array<[Record<string, string>, string]>) {
          const res = await upload(api, 'x.png', await png(10, 10), fields);
          expect422(res, 'VALIDATION_FAILED', [field]);
        }
        for (const fields of [{ maxWidth: '100' }, { maxWidth: '4000' }, { quality: '50' }, { quality: '100' }] as Array<Record<string, string>>) {
          expect((await upload(api, 'x.png', await png(120, 10), fields)).status).toBe(201);
        }
      });

      it('takes the type from the bytes, keeps animations, serves SVG sandboxed and refuses a pixel bomb', async () => {
        const api = await ctx.site();
        const pdf = (await upload(api, 'photo.png', Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(64)]))).body.data;
        const webpBytes = await sharp({ create: { width: 900, height: 450, channels: 3, background: 'green' } })
          .webp()
          .toBuffer();
        const webp = (await upload(api, 'leaf.jpg', webpBytes)).body.data;
        expect(webp).toMatchObject({ mimeType: 'image/webp', filename: 'leaf.webp', width: 900, height: 450 });
        expect(await sharp((await fetchFile(`${webp.url}?w=400`)).body).metadata()).toMatchObject({ format: 'webp', width: 400, height: 200 });
        expect(pdf).toMatchObject({ mimeType: 'application/pdf', filename: 'photo.pdf', variants: null, width: null });
        const frame = (color: string) =>
          sharp({ create: { width: 600, height: 300, channels: 3, background: color } })
            .png()
            .toBuffer();
        const gif = await sharp([await frame('red'), await frame('green')], { join: { animated: true } })
          .gif()
          .toBuffer();
        const anim = (await upload(api, 'anim.gif', gif)).body.data;
        expect(anim).toMatchObject({ mimeType: 'image/gif', width: 600, height: 300 });
        expect((await sharp((await fetchFile(anim.url)).body, { animated: true }).metadata()).pages).toBe(2);
        expect((await sharp((await fetchFile(`${anim.url}?w=400`)).body, { animated: true }).metadata()).pages).toBe(2);
        const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>');
        const s = (await upload(api, 'logo.svg', svg)).body.data;
        expect(s).toMatchObject({ mimeType: 'image/svg+xml', filename: 'logo.svg', variants: null });
        const served = await fetchFile(s.url);
        expect(served.headers['content-type']).toBe('image/svg+xml');
        expect(served.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
        expect(served.headers['x-content-type-options']).toBe('nosniff');
        const files = (await stored()).length;
        const rows = await rowCount();
        const bomb = await sharp({ create: { width: 8000, height: 8000, channels: 3, background: 'white' } })
          .png({ compressionLevel: 9 })
          .toBuffer();
        const refused = await upload(api, 'bomb.png', bomb);
        expect(refused.status).toBe(422);
        expectErrorShape(refused.body, 422, 'IMAGE_TOO_LARGE');
        expect((await stored()).length).toBe(files);
        expect(await rowCount()).toBe(rows);
      });

      it('accepts exactly 50 MiB; one byte more is a 413 and nothing is stored; so is a refused scope', async () => {
        const api = await ctx.site();
        const files = (await stored()).length;
        const rows = await rowCount();
        const tooBig = await upload(api, 'big.bin', Buffer.alloc(52_428_801, 1));
        expect(tooBig.status).toBe(413);
        expectErrorShape(tooBig.body, 413);
        expect((await stored()).length).toBe(files);
        expect(await rowCount()).toBe(rows);
        const writer = Object.assign(client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { scopes: allScopesExcept('media.upload') })).token), {
          token: (await createTokenFor(ctx.app, api.siteId, { scopes: allScopesExcept('media.upload') })).token,
        });
        const denied = await upload(writer, 'x.png', await png(10, 10));
        expect(denied.status).toBe(403);
        expect((await stored()).length).toBe(files);
        const exact = await upload(api, 'exact.bin', Buffer.alloc(52_428_800, 1));
        expect(exact.status).toBe(201);
        expect(exact.body.data).toMatchObject({ size: 52_428_800, mimeType: 'application/octet-stream', filename: 'exact.bin' });
        // A file past the in-memory size is streamed from storage, ranges too.
        const tail = await fetchFile(exact.body.data.url, { range: 'bytes=-5' });
        expect(tail.status).toBe(206);
        expect(tail.headers['content-range']).toBe('bytes 52428795-52428799/52428800');
        expect(tail.body).toEqual(Buffer.alloc(5, 1));
        expect((await stored()).length).toBe(files + 1);
      }, 60_000);
    });

    describe('sizes made at the URL (issue 10 item 4, decisions M16)', () => {
      /** Left half red, right half blue. */
      const halves = () =>
        sharp({ create: { width: 1600, height: 800, channels: 3, background: 'red' } })
          .composite([{ input: { create: { width: 800, height: 800, channels: 3, background: 'blue' } }, left: 800, top: 0 }])
          .png()
          .toBuffer();
      const colour = async (body: Buffer) => {
        const { channels } = await sharp(body).stats();
        return channels[0]!.mean > 200 && channels[2]!.mean < 50 ? 'red' : channels[2]!.mean > 200 && channels[0]!.mean < 50 ? 'blue' : 'mixed';
      };
      const derivatives = async (id: string) => (await stored()).filter((k) => k.includes(`${id}/d/`));

      it('cuts w×h around the focal point (cover) or fits inside (contain), keeps what it made, and starts again when the focal point moves', async () => {
        const api = await ctx.site();
        const m = (await upload(api, 'halves.png', await halves())).body.data;
        await api.put(`/v1/media/${m.id}`, { focalX: 0.9, focalY: 0.5 });
        const right = await fetchFile(`${m.url}?w=400&h=400`);
        expect(right.status).toBe(200);
        expect(right.headers['content-type']).toBe('image/png');
        expect(right.headers.vary).toBe('Accept');
        expect(await sharp(right.body).metadata()).toMatchObject({ width: 400, height: 400 });
        expect(await colour(right.body)).toBe('blue');
        expect(await derivatives(m.id)).toHaveLength(1);
        const again = await fetchFile(`${m.url}?w=400&h=400&fit=cover`);
        expect(again.body.equals(right.body)).toBe(true);
        expect(again.headers.etag).toBe(right.headers.etag);
        expect(again.headers.etag).not.toBe((await fetchFile(m.url)).headers.etag);
        expect((await fetchFile(`${m.url}?w=400&h=400`, { 'if-none-match': String(right.headers.etag) })).status).toBe(304);
        expect(await derivatives(m.id)).toHaveLength(1);
        const contain = await fetchFile(`${m.url}?w=400&h=400&fit=contain`);
        expect(await sharp(contain.body).metadata()).toMatchObject({ width: 400, height: 200 });
        expect(await colour(contain.body)).toBe('mixed');
        expect(await derivatives(m.id)).toHaveLength(2);
        // A new focal point: the kept sizes go, the same URL cuts elsewhere under another ETag.
        await api.put(`/v1/media/${m.id}`, { focalX: 0.1 });
        expect(await derivatives(m.id)).toHaveLength(0);
        const left = await fetchFile(`${m.url}?w=400&h=400`);
        expect(await colour(left.body)).toBe('red');
        expect(left.headers.etag).not.toBe(right.headers.etag);
        // Never upscaled: a box larger than the image shrinks to it, keeping its shape.
        const big = await fetchFile(`${m.url}?w=1200&h=2400`);
        expect(await sharp(big.body).metadata()).toMatchObject({ width: 400, height: 800 });
        for (const q of ['w=400&h=0', 'w=400&h=2401', 'h=400', 'w=400&h=12.5', 'w=400&h=400&fit=stretch', 'w=400&fit=cover', 'w=333&h=100']) {
          const res = await fetchFile(`${m.url}?${q}`);
          expect(res.status, q).toBe(400);
          expectErrorShape(JSON.parse(res.body.toString()), 400, 'BAD_REQUEST');
        }
        // Deleted for good: the sizes go with the file.
        await api.delete(`/v1/media/${m.id}/force`);
        expect((await stored()).filter((k) => k.includes(m.id))).toEqual([]);
      });

      it('sends a width as AVIF or WebP when Accept takes it (Vary: Accept), the stored format otherwise, and GIFs as GIFs', async () => {
        const api = await ctx.site();
        const m = (await upload(api, 'photo.png', await png(1600, 800))).body.data;
        const plain = await fetchFile(`${m.url}?w=400`);
        expect(plain.headers['content-type']).toBe('image/png');
        expect(plain.headers.vary).toBe('Accept');
        const avif = await fetchFile(`${m.url}?w=400`, { accept: 'image/avif,image/webp,image/apng,*/*;q=0.8' });
        expect(avif.headers['content-type']).toBe('image/avif');
        expect(await sharp(avif.body).metadata()).toMatchObject({ format: 'heif', width: 400, height: 200 });
        expect(avif.headers.etag).not.toBe(plain.headers.etag);
        const webp = await fetchFile(`${m.url}?w=400`, { accept: 'image/avif;q=0, image/webp' });
        expect(webp.headers['content-type']).toBe('image/webp');
        expect(await sharp(webp.body).metadata()).toMatchObject({ format: 'webp', width: 400 });
        const crop = await fetchFile(`${m.url}?w=150&h=150`, { accept: 'image/webp' });
        expect(crop.headers['content-type']).toBe('image/webp');
        expect(await sharp(crop.body).metadata()).toMatchObject({ width: 150, height: 150 });
        expect(await derivatives(m.id)).toHaveLength(3);
        // The original is the original, whatever the reader takes.
        const original = await fetchFile(m.url, { accept: 'image/avif' });
        expect(original.headers['content-type']).toBe('image/png');
        expect(original.headers.vary).toBeUndefined();
        const frame = (c: string) =>
          sharp({ create: { width: 600, height: 300, channels: 3, background: c } })
            .png()
            .toBuffer();
        const gif = (
          await upload(
            api,
            'anim.gif',
            await sharp([await frame('red'), await frame('green')], { join: { animated: true } })
              .gif()
              .toBuffer(),
          )
        ).body.data;
        const served = await fetchFile(`${gif.url}?w=400`, { accept: 'image/avif,image/webp' });
        expect(served.headers['content-type']).toBe('image/gif');
        expect((await sharp(served.body, { animated: true }).metadata()).pages).toBe(2);
        // A replace makes the kept sizes stale: they go.
        const { payload, headers } = multipartBody([{ name: 'file', filename: 'new.png', data: await png(1000, 1000) }]);
        await ctx.app.inject({ method: 'POST', url: `/v1/media/${m.id}/replace`, payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
        expect(await derivatives(m.id)).toHaveLength(0);
        expect(await sharp((await fetchFile(`${m.url}?w=400`, { accept: 'image/webp' })).body).metadata()).toMatchObject({ width: 400, height: 400 });
      });
    });

    describe('a client that hangs up mid-upload', () => {
      it('leaves the file count, the storage listing and the database as they were, and the next upload works', async () => {
        const api = await ctx.site();
        await upload(api, 'before.png', await png(20, 20));
        const [files, rows, outbox] = [await stored(), await rowCount(), await outboxCount()];
        await ctx.app.listen({ port: 0, host: '127.0.0.1' });
        const { port } = ctx.app.server.address() as AddressInfo;
        const { payload, headers } = multipartBody([{ name: 'file', filename: 'cut.bin', data: randomBytes(24 * 1024 * 1024) }]);
        const socket = net.connect(port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(
          `POST /v1/media/upload HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${api.token}\r\ncontent-type: ${headers['content-type']}\r\ncontent-length: ${payload.length}\r\n\r\n`,
        );
        // Half the body (past the first 8 MiB part on S3), then the connection is gone.
        await new Promise<void>((resolve) => socket.write(payload.subarray(0, 12 * 1024 * 1024 + 12345), () => resolve()));
        await new Promise((r) => setTimeout(r, 1000));
        // Mid-upload, the bytes are on their way to storage: a temporary file, or a multipart upload.
        if (storage === 'local') expect((await stored()).length).toBe(files.length + 1);
        else expect(await incompleteUploads(ctx.config.s3!)).toBe(1);
        socket.destroy();
        const deadline = Date.now() + 10_000;
        while (Date.now() < deadline && (await stored()).length !== files.length) await new Promise((r) => setTimeout(r, 100));
        expect(await stored()).toEqual(files);
        expect(await rowCount()).toBe(rows);
        expect(await outboxCount()).toBe(outbox);
        if (storage === 's3') expect(await incompleteUploads(ctx.config.s3!)).toBe(0);
        expect((await upload(api, 'after.png', await png(20, 20))).status).toBe(201);
      });
    });

    describe('media lifecycle and lists (decisions M3, M5)', () => {
      it('replaces the bytes under the same id and URL: new ETag, variants made again, stale ones gone', async () => {
        const api = await ctx.site();
        const m = (await upload(api, 'hero.png', await png(2000, 1000))).body.data;
        const before = await fetchFile(`${m.url}?w=800`);
        const small = await sharp({ create: { width: 300, height: 200, channels: 3, background: 'blue' } })
          .jpeg()
          .toBuffer();
        const { payload, headers } = multipartBody([{ name: 'file', filename: 'other.jpg', data: small }]);
        const res = await ctx.app.inject({
          method: 'POST',
          url: `/v1/media/${m.id}/replace`,
          payload,
          headers: { ...headers, authorization: `Bearer ${api.token}` },
        });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().data).toMatchObject({
          id: m.id,
          url: m.url,
          filename: 'hero.png',
          mimeType: 'image/jpeg',
          width: 300,
          height: 200,
          originalName: 'other.jpg',
        });
        const after = await fetchFile(`${m.url}?w=800`);
        expect(after.headers.etag).not.toBe(before.headers.etag);
        expect(after.headers['content-type']).toBe('image/jpeg');
        expect((await sharp(after.body).metadata()).width).toBe(300);
        expect((await fetchFile(m.url, { 'if-none-match': String(before.headers.etag) })).status).toBe(200);
        expect(
          (await stored())
            .filter((f) => f.includes(m.id))
            .map((f) => path.basename(f))
            .sort(),
        ).toEqual(['original', 'w150']);
        const types = (await ctx.app.database.db.selectFrom('outbox_events').select('type').where('site_id', '=', api.siteId).execute()).map((e) => e.type);
        expect(types).toEqual(['media.uploaded', 'media.replaced']);
        await api.delete(`/v1/media/${m.id}`);
        const trashed = await ctx.app.inject({
          method: 'POST',
          url: `/v1/media/${m.id}/replace`,
          payload,
          headers: { ...headers, authorization: `Bearer ${api.token}` },
        });
        expect(trashed.statusCode).toBe(404);
      });

      it("trashes (URL still served), restores, force-deletes (URL 404) and empties only this site's trash", async () => {
        const api = await ctx.site();
        const a = (await upload(api, 'a.png', await png(20, 20))).body.data;
        const b = (await upload(api, 'b.png', await png(20, 20))).body.data;
        const other = await ctx.site();
        const theirs = (await upload(other, 'c.png', await png(20, 20))).body.data;
        await other.delete(`/v1/media/${theirs.id}`);
        expect((await api.delete(`/v1/media/${a.id}`)).body).toEqual({ message: 'Media file moved to the trash.' });
        expect((await api.get('/v1/media')).body.data.map((m: any) => m.id)).toEqual([b.id]);
        const trash = (await api.get('/v1/media/trash')).body.data;
        expect(trash).toEqual([expect.objectContaining({ id: a.id, deletedAt: expect.any(String) })]);
        expect((await fetchFile(a.url)).status).toBe(200);
        expect((await api.post(`/v1/media/${a.id}/restore`)).body.data.deletedAt).toBeNull();
        expect((await api.post(`/v1/media/${a.id}/restore`)).status).toBe(404);
        await api.delete(`/v1/media/${a.id}`);
        expect((await api.delete('/v1/media/trash')).body).toEqual({ deleted: 1 });
        expect((await fetchFile(a.url)).status).toBe(404);
        expect((await other.get('/v1/media/trash')).body.meta.total).toBe(1);
        expect((await api.delete(`/v1/media/${b.id}/force`)).body).toEqual({ message: 'Media file deleted.' });
        expect((await fetchFile(b.url)).status).toBe(404);
        expect((await api.get(`/v1/media/${b.id}`)).status).toBe(404);
        expect((await stored()).some((f) => f.includes(b.id))).toBe(false);
        const events = await ctx.app.database.db
          .selectFrom('outbox_events')
          .select(['type', 'payload'])
          .where('site_id', '=', api.siteId)
          .orderBy('id')
          .execute();
        const summary = events.map((e) => {
          const data = typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload;
          return `${e.type}:${data.id === a.id ? 'a' : data.id === b.id ? 'b' : '?'}`;
        });
        expect(summary).toEqual(['media.uploaded:a', 'media.uploaded:b', 'media.deleted:a', 'media.deleted:b']);
      });

      it('deletes a folder with action=delete: its files, their rows and their stored objects go, with media.deleted', async () => {
        const api = await ctx.site();
        const top = (await api.post('/v1/media-folders', { name: 'Top' })).body.data;
        const sub = (await api.post('/v1/media-folders', { name: 'Sub', parentId: top.id })).body.data;
        const a = (await upload(api, 'a.png', await png(500, 200), { folderId: top.id })).body.data;
        const b = (await upload(api, 'b.png', await png(500, 200), { folderId: sub.id })).body.data;
        const kept = (await upload(api, 'kept.png', await png(500, 200))).body.data;
        expect((await stored()).filter((k) => k.includes(a.id) || k.includes(b.id))).toHaveLength(6);
        expect((await api.delete(`/v1/media-folders/${top.id}?action=delete`)).status).toBe(200);
        expect((await stored()).filter((k) => k.includes(a.id) || k.includes(b.id))).toEqual([]);
        expect((await stored()).filter((k) => k.includes(kept.id))).toHaveLength(3);
        expect((await api.get(`/v1/media/${a.id}`)).status).toBe(404);
        expect((await fetchFile(b.url)).status).toBe(404);
        const types = (await ctx.app.database.db.selectFrom('outbox_events').select('type').where('site_id', '=', api.siteId).execute()).map((e) => e.type);
        expect(types.filter((t) => t === 'media.deleted')).toHaveLength(2);
      });

      it('filters by folder, type, MIME type, size and text; updates metadata and the focal point', async () => {
        const api = await ctx.site();
        const folder = (await api.post('/v1/media-folders', { name: 'Photos' })).body.data;
        const inFolder = (await upload(api, 'sunset.png', await png(40, 20), { folderId: folder.id, alt: 'Sunset over the bay' })).body.data;
        const doc = (await upload(api, 'report.pdf', Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(5000)]))).body.data;
        const ids = async (q: string) => (await api.get(`/v1/media?${q}`)).body.data.map((m: any) => m.id);
        expect(await ids(`folderId=${folder.id}`)).toEqual([inFolder.id]);
        expect(await ids('folderId=root')).toEqual([doc.id]);
        expect(await ids('type=image')).toEqual([inFolder.id]);
        expect(await ids('type=document')).toEqual([doc.id]);
        expect(await ids('mimeType=application/pdf')).toEqual([doc.id]);
        expect(await ids(`sizeMin=${doc.size}`)).toEqual([doc.id]);
        expect(await ids(`sizeMax=${doc.size - 1}`)).toEqual([inFolder.id]);
        expect(await ids('search=BAY')).toEqual([inFolder.id]);
        expect(await ids('sortBy=filename')).toEqual([doc.id, inFolder.id]);
        expect((await api.get(`/v1/media-folders/${folder.id}`)).body.data.mediaCount).toBe(1);
        expect422(await upload(api, 'x.png', await png(10, 10), { folderId: '00000000-0000-4000-8000-000000000000' }), 'FOLDER_NOT_FOUND', ['folderId']);
        const updated = await api.put(`/v1/media/${inFolder.id}`, { alt: 'Dusk', title: 'Bay', description: 'Taken in June', focalX: 0.25, focalY: 1 });
        expect(updated.body.data).toMatchObject({
          alt: 'Dusk',
          title: 'Bay',
          description: 'Taken in June',
          focalX: 0.25,
          focalY: 1,
          folder: { id: folder.id, name: 'Photos' },
          url: inFolder.url,
        });
        expect422(await api.put(`/v1/media/${inFolder.id}`, { focalX: 1.5 }), 'VALIDATION_FAILED', ['focalX']);
        expect422(await api.put(`/v1/media/${inFolder.id}`, {}), 'VALIDATION_FAILED', ['body']);
      });
    });
  });
}
