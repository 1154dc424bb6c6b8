import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { client, expectErrorShape } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';

/** A local IndexNow endpoint: records each submission and answers with `status` (decisions S2: tests point the endpoint here). */
const received: Array<{ host: string; key: string; keyLocation: string; urlList: string[] }> = [];
let status = 202;
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    received.push(JSON.parse(body));
    res.statusCode = status;
    res.end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const ctx = useTestApp({ indexNow: { endpoint: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/indexnow`, intervalMs: 0 } });
type Api = Awaited<ReturnType<typeof ctx.site>>;

async function post(api: Api, body: Record<string, unknown>) {
  const res = await api.post('/v1/contents', { type: 'post', title: 'A post', bodyMarkdown: 'Text.', status: 'published', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data ?? res.body;
}

describe('IndexNow (decisions S2, S12)', () => {
  it('test answers 422 without a key, and submits the home page with the key location when there is one', async () => {
    const api = await ctx.site();
    const none = await api.get('/v1/seo/indexnow/test');
    expect(none.status).toBe(422);
    expect(none.body.errors).toHaveProperty('indexNowKey');
    await api.put('/v1/seo/settings', { indexNowKey: 'key-12345678' });
    received.length = 0;
    const res = await api.get('/v1/seo/indexnow/test');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', url: 'https://example.test/', responseCode: 202 });
    expect(received).toEqual([
      { host: 'example.test', key: 'key-12345678', keyLocation: 'https://example.test/key-12345678.txt', urlList: ['https://example.test/'] },
    ]);
    expect((await api.get('/v1/seo/settings')).body.indexNowLastVerifiedAt).toEqual(expect.any(String));
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const anon = client(ctx.app);
    const file = await anon.get('/v1/public/indexnow/key-12345678.txt', { 'x-site-key': key });
    expect(file.status).toBe(200);
    expect(file.text).toBe('key-12345678');
    expect((await anon.get('/v1/public/indexnow/other-key-123.txt', { 'x-site-key': key })).status).toBe(404);
  });

  it('submits the contents published or changed after it was enabled, once, in one batch per run, and logs each URL', async () => {
    const api = await ctx.site();
    await post(api, { slug: 'before' });
    await api.put('/v1/seo/settings', { indexNowKey: 'abcdefgh', indexNowEnabled: true });
    await new Promise((r) => setTimeout(r, 5));
    const a = await post(api, { slug: 'fresh' });
    await post(api, { slug: 'draft', status: 'draft' });
    received.length = 0;
    await ctx.app.worker.tick();
    const mine = () => received.filter((r) => r.key === 'abcdefgh');
    expect(mine()).toHaveLength(1);
    expect(mine()[0]!.urlList).toEqual(['https://example.test/blog/fresh']);
    await ctx.app.worker.tick();
    expect(mine()).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 5));
    await api.put(`/v1/contents/${a.id}`, { title: 'Fresh, edited' });
    await ctx.app.worker.tick();
    expect(mine()).toHaveLength(2);
    const logs = await api.get('/v1/seo/indexnow/logs');
    expect(logs.body.meta.total).toBe(2);
    expect(logs.body.data[0]).toEqual({
      id: expect.any(Number),
      url: 'https://example.test/blog/fresh',
      status: 'success',
      responseCode: 202,
      submittedAt: expect.any(String),
    });
    expect((await api.get('/v1/seo/indexnow/stats')).body).toEqual({ total: 2, success: 2, failed: 0, lastSubmittedAt: expect.any(String) });
  });

  it('logs a refused submission as failed and submits the same URLs again at the next run', async () => {
    const api = await ctx.site();
    await api.put('/v1/seo/settings', { indexNowKey: 'retry-key-1', indexNowEnabled: true });
    await new Promise((r) => setTimeout(r, 5));
    await post(api, { slug: 'retried' });
    received.length = 0;
    status = 503;
    try {
      await ctx.app.worker.tick();
    } finally {
      status = 202;
    }
    await ctx.app.worker.tick();
    const mine = received.filter((r) => r.key === 'retry-key-1');
    expect(mine.map((r) => r.urlList)).toEqual([['https://example.test/blog/retried'], ['https://example.test/blog/retried']]);
    expect((await api.get('/v1/seo/indexnow/stats')).body).toMatchObject({ total: 2, success: 1, failed: 1 });
    expect((await api.get('/v1/seo/indexnow/logs?sortOrder=asc')).body.data.map((l: any) => [l.status, l.responseCode])).toEqual([
      ['failed', 503],
      ['success', 202],
    ]);
  });

  it('answers 409 integration_not_connected for search-indexing logs and stats', async () => {
    const api = await ctx.site();
    for (const path of ['/v1/seo/search-indexing/logs', '/v1/seo/search-indexing/stats']) {
      const res = await api.get(path);
      expect(res.status).toBe(409);
      expectErrorShape(res.body, 409, 'integration_not_connected');
    }
  });
});
