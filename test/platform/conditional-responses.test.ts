import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { createTokenFor } from '../helpers/app.js';
import { client, multipartBody } from '../helpers/http.js';
import { useTestApp } from '../helpers/suite.js';

/** The one conditional-response path (issue 29 item 3, decisions S16): every cacheable route answers If-None-Match alike. */
const ctx = useTestApp();

type Get = (headers?: Record<string, string>) => Promise<{ status: number; text: string; headers: Record<string, unknown> }>;

/** The same tag with the other strength: `W/"x"` for `"x"`, `"x"` for `W/"x"`. */
const otherStrength = (etag: string) => (etag.startsWith('W/') ? etag.slice(2) : `W/${etag}`);

/**
 * A route's answers to If-None-Match: its own tag, the tag weak or strong, the tag in a list, and
 * `*` are all 304 with the route's ETag and Cache-Control and no body; another tag is a 200.
 */
async function expectOneConditionalRule(label: string, get: Get) {
  const first = await get();
  expect(first.status, label).toBe(200);
  const etag = String(first.headers.etag);
  const cacheControl = String(first.headers['cache-control']);
  expect(etag, label).toMatch(/^(W\/)?"[^"]+"$/);
  expect(cacheControl, label).not.toBe('undefined');
  for (const given of [etag, otherStrength(etag), `"other", ${otherStrength(etag)}`, '*']) {
    const res = await get({ 'if-none-match': given });
    expect(res.status, `${label} If-None-Match: ${given}`).toBe(304);
    expect(res.text, label).toBe('');
    expect(res.headers.etag, label).toBe(etag);
    expect(res.headers['cache-control'], label).toBe(cacheControl);
  }
  const changed = await get({ 'if-none-match': '"other", W/"another"' });
  expect(changed.status, label).toBe(200);
  expect(changed.text, label).toBe(first.text);
}

describe('conditional responses (decisions S16)', () => {
  it('answer `*`, weak and strong tags one way on every cacheable route, and a 304 carries ETag and Cache-Control', async () => {
    const api = await ctx.site();
    const key = (await api.get('/v1/site/info')).body.data.publicKey as string;
    const anon = client(ctx.app);
    const withKey: (url: string) => Get = (url) => (headers) => anon.get(url, { 'x-site-key': key, ...headers });

    await api.put('/v1/seo/settings', { llmsTxtEnabled: true, indexNowKey: 'key-12345678' });
    const post = await api.post('/v1/contents', { type: 'post', title: 'Lisbon', bodyMarkdown: '# Lisbon\n\nTrams.', status: 'published' });
    expect(post.status).toBe(201);
    expect((await api.post('/v1/site-blocks', { name: 'About', type: 'page', path: '/about', schema: [{ name: 'title', type: 'string' }] })).status).toBe(201);
    await api.put('/v1/site-blocks/about/data', { data: { title: 'Hello' } });
    expect((await api.post('/v1/site-blocks/about/publish')).status).toBe(200);
    const form = await api.post('/v1/forms', { name: 'Contact', schema: [{ name: 'email', type: 'email', required: true }], status: 'active' });
    expect(form.status).toBe(201);
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: { r: 200, g: 40, b: 40 } } })
      .png()
      .toBuffer();
    const { payload, headers } = multipartBody([{ name: 'file', filename: 'dot.png', data: png }]);
    const upload = await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
    expect(upload.statusCode, upload.body).toBe(201);
    const filePath = new URL(upload.json().data.url).pathname;
    const { token } = await createTokenFor(ctx.app, api.siteId, { kind: 'delivery', userId: api.userId });
    const reader = client(ctx.app, token);

    const routes: Array<[string, Get]> = [
      ['robots.txt', withKey('/v1/public/robots.txt')],
      ['robots.txt (management)', (h) => api.get('/v1/seo/robots.txt', h)],
      ['sitemap.xml', withKey('/v1/public/sitemap.xml')],
      ['llms.txt', withKey('/v1/public/llms.txt')],
      ['llms-full.txt (weak ETag)', withKey('/v1/public/llms-full.txt')],
      ['content markdown', withKey(`/v1/public/markdown/content/${post.body.data.slug}`)],
      ['IndexNow key file', withKey('/v1/public/indexnow/key-12345678.txt')],
      ['public site block (delivery cache)', withKey('/v1/public/site-blocks/about')],
      ['public form', withKey('/v1/public/forms/contact')],
      ['media file', (h) => anon.get(filePath, h)],
      ['media file width', (h) => anon.get(`${filePath}?w=150`, h)],
      ["delivery token's read (delivery cache)", (h) => reader.get(`/v1/contents/${post.body.data.id}`, h)],
    ];
    for (const [label, get] of routes) await expectOneConditionalRule(label, get);
  });

  it('answers `*` and a weak tag on a delivery-cache miss the same way as on a hit', async () => {
    const api = await ctx.site();
    const post = await api.post('/v1/contents', { type: 'post', title: 'Porto', bodyMarkdown: 'Bridges.', status: 'published' });
    const { token } = await createTokenFor(ctx.app, api.siteId, { kind: 'delivery', userId: api.userId });
    const reader = client(ctx.app, token);
    const url = `/v1/contents/${post.body.data.id}`;
    // The first read ever is a miss: answered by the store hook.
    const star = await reader.get(url, { 'if-none-match': '*' });
    expect(star.status).toBe(304);
    expect(star.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(star.headers['cache-control']).toBe('private, no-cache');
    const etag = String(star.headers.etag);
    // Another record's write moves the site's generation: the next read is a miss again, same body.
    expect((await api.post('/v1/tags', { name: 'Rivers' })).status).toBe(201);
    const misses = ctx.app.deliveryCache.misses;
    const weak = await reader.get(url, { 'if-none-match': `W/${etag}` });
    expect(ctx.app.deliveryCache.misses).toBe(misses + 1);
    expect(weak.status).toBe(304);
    expect(weak.headers.etag).toBe(etag);
    expect(weak.headers['cache-control']).toBe('private, no-cache');
  });
});
