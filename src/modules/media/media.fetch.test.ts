import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken } from '../../../test/helpers/app.js';
import { client, expect422, multipartBody } from '../../../test/helpers/http.js';
import { s3Endpoint } from '../../../test/helpers/s3.js';
import { useTestApp } from '../../../test/helpers/suite.js';

/** Upload from a URL (decisions M2) against a real HTTP server on loopback (tests allow loopback explicitly). */
let base = '';
let server: http.Server;
let photo: Buffer;

beforeAll(async () => {
  photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: 'orange' } })
    .jpeg()
    .toBuffer();
  server = http.createServer((req, res) => {
    const hop = /^\/hop\/(\d+)$/.exec(req.url ?? '');
    if (hop) {
      const n = Number(hop[1]);
      res.writeHead(302, { location: n > 0 ? `/hop/${n - 1}` : '/files/Sea%20view.jpg' }).end();
    } else if (req.url?.startsWith('/files/')) res.writeHead(200, { 'content-type': 'text/plain' }).end(photo);
    else if (req.url === '/big') {
      res.writeHead(200);
      const chunk = Buffer.alloc(1024 * 1024, 7);
      let sent = 0;
      const pump = () => {
        while (sent < 51) {
          sent++;
          if (!res.write(chunk)) return res.once('drain', pump);
        }
        res.end();
      };
      pump();
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

// The storing part on local disk and on a real S3 server (radosgw).
for (const storage of ['local', 's3'] as const) {
  describe.skipIf(storage === 's3' && !s3Endpoint())(`upload from a URL (decisions M2) on ${storage === 'local' ? 'local disk' : 'S3'}`, () => {
    const ctx = useTestApp({}, {}, storage);
    it('fetches through up to 3 redirects, types the file by its bytes and names it from the URL', async () => {
      const api = await ctx.site();
      const res = await api.post('/v1/media/upload-from-url', { url: `${base}/hop/2`, alt: 'The sea' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.data).toMatchObject({
        originalName: 'Sea view.jpg',
        filename: 'sea-view.jpg',
        mimeType: 'image/jpeg',
        width: 640,
        height: 480,
        alt: 'The sea',
      });
      expect((await api.post('/v1/media/upload-from-url', { url: `${base}/files/a.jpg`, name: 'Custom.jpg' })).body.data.originalName).toBe('Custom.jpg');
      expect422(await api.post('/v1/media/upload-from-url', { url: `${base}/hop/3` }), 'URL_FETCH_FAILED', ['url']);
      expect422(await api.post('/v1/media/upload-from-url', { url: `${base}/nope` }), 'URL_FETCH_FAILED', ['url']);
      expect422(await api.post('/v1/media/upload-from-url', { url: 'ftp://example.com/x.jpg' }), 'VALIDATION_FAILED', ['url']);
      const big = await api.post('/v1/media/upload-from-url', { url: `${base}/big` });
      expect422(big, 'URL_FETCH_FAILED', ['url']);
      expect(big.body.message).toContain('50 MiB');
      expect((await api.get('/v1/media')).body.meta.total).toBe(2);
      // The refused downloads left nothing behind: two originals and their variants, no temporary file.
      const keys = await ctx.app.storage.list('');
      expect(keys.filter((k) => k.endsWith('/original'))).toHaveLength(2);
      expect(keys.filter((k) => k.startsWith('tmp/'))).toEqual([]);
    }, 30_000);

    it('takes the fields as multipart/form-data too (shared decisions M2), and refuses a file part', async () => {
      const api = await ctx.site();
      const send = (parts: Parameters<typeof multipartBody>[0]) => {
        const { payload, headers } = multipartBody(parts);
        return ctx.app.inject({ method: 'POST', url: '/v1/media/upload-from-url', payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
      };
      const res = await send([
        { name: 'url', value: `${base}/files/form.jpg` },
        { name: 'alt', value: 'Sent as a form' },
      ]);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data).toMatchObject({ originalName: 'form.jpg', mimeType: 'image/jpeg', alt: 'Sent as a form' });
      const noUrl = await send([{ name: 'alt', value: 'no url' }]);
      expect422({ status: noUrl.statusCode, body: noUrl.json() }, 'VALIDATION_FAILED', ['url']);
      const withFile = await send([
        { name: 'url', value: `${base}/files/form.jpg` },
        { name: 'file', filename: 'x.jpg', data: photo },
      ]);
      expect422({ status: withFile.statusCode, body: withFile.json() }, 'VALIDATION_FAILED', ['file']);
      expect((await api.get('/v1/media')).body.meta.total).toBe(1);
    });
  });
}

describe('upload from a URL (decisions M2)', () => {
  it('refuses loopback and private addresses unless the service allows them', async () => {
    const strict = await buildTestApp({ allowPrivateNetwork: false });
    try {
      const s = await createSiteWithToken(strict.app);
      const api = client(strict.app, s.token);
      for (const url of [`${base}/files/a.jpg`, 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://10.0.0.1/x']) {
        const res = await api.post('/v1/media/upload-from-url', { url });
        expect(res.status, url).toBe(422);
        expect(res.body.errors.url[0], url).toContain('not public');
      }
      expect((await api.get('/v1/media')).body.meta.total).toBe(0);
    } finally {
      await strict.close();
    }
  });
});

describe('upload from a URL: one deadline for the whole fetch (issue 36 item 4)', () => {
  /**
   * A server that trickles its answer a byte every 100 ms: the head (`what: 'head'`, never
   * finished within the deadline) or, after a whole head, the body. Records when each socket closes.
   */
  async function trickler(what: 'head' | 'body') {
    const closed: number[] = [];
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      const head = `HTTP/1.1 200 OK\r\ncontent-type: image/png\r\nx-padding: ${'a'.repeat(200)}\r\n\r\n`;
      let sent = 0;
      if (what === 'body') socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 100000\r\n\r\n');
      const timer = setInterval(() => {
        socket.write(what === 'head' ? head[sent++ % head.length]! : 'x');
      }, 100);
      socket.on('close', () => {
        clearInterval(timer);
        sockets.delete(socket);
        closed.push(Date.now());
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow.png`,
      closed,
      close: () => {
        for (const s of sockets) s.destroy();
        return new Promise<void>((r) => server.close(() => r()));
      },
    };
  }

  for (const what of ['head', 'body'] as const) {
    it(`a target that trickles its ${what === 'head' ? 'response headers' : 'body'} ends at the deadline with a 422, its socket closed, nothing stored`, async () => {
      const app = await buildTestApp({ mediaFetchTimeoutMs: 1_000 });
      const target = await trickler(what);
      try {
        const s = await createSiteWithToken(app.app);
        const api = client(app.app, s.token);
        const started = Date.now();
        const res = await api.post('/v1/media/upload-from-url', { url: target.url });
        const took = Date.now() - started;
        expect422(res, 'URL_FETCH_FAILED', ['url']);
        expect(res.body.errors.url[0]).toBe('The URL took longer than 1000 ms.');
        // The deadline (1 s) and a margin for a loaded machine, far below the trickle's own end (never).
        expect(took).toBeGreaterThanOrEqual(1_000);
        expect(took).toBeLessThan(5_000);
        // The outbound connection is gone too, not left open behind the answer.
        for (let i = 0; i < 50 && target.closed.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
        expect(target.closed).toHaveLength(1);
        expect((await api.get('/v1/media')).body.meta.total).toBe(0);
        expect(await app.app.storage.list('')).toEqual([]);
      } finally {
        await target.close();
        await app.close();
      }
    });
  }
});
