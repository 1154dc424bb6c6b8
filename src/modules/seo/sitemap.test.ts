import { describe, expect, it } from 'vitest';
import { client, expectErrorShape } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { type SitemapUrl, sitemapIndexXml, URLS_PER_FILE, urlsetXml } from './sitemap.service.js';

const ctx = useTestApp();
const site = ctx.site;
type Api = Awaited<ReturnType<typeof site>>;

function multipart(content: string) {
  const boundary = '----cairnSitemapBoundary';
  return {
    payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="e.csv"\r\nContent-Type: text/csv\r\n\r\n${content}\r\n--${boundary}--\r\n`,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

async function post(api: Api, body: Record<string, unknown>) {
  const res = await api.post('/v1/contents', { type: 'post', title: 'A post', bodyMarkdown: 'Text.', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data ?? res.body;
}

describe('custom sitemap entries', () => {
  it('creates (201, bare entry with a UUID and defaults), updates, lists 50 per page, and deletes', async () => {
    const api = await site();
    const res = await api.post('/v1/sitemap/entries', { url: '/about', title: 'About us', lastModified: '2026-11-01T10:00:00+02:00' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      siteId: api.siteId,
      url: '/about',
      isExternal: false,
      priority: 0.5,
      changefreq: 'weekly',
      lastModified: '2026-11-01T08:00:00.000Z',
      title: 'About us',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const upd = await api.put(`/v1/sitemap/entries/${res.body.id}`, { priority: 0.9, changefreq: 'daily' });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ url: '/about', priority: 0.9, changefreq: 'daily', title: 'About us' });
    const list = await api.get('/v1/sitemap/entries');
    expect(list.body.meta).toEqual({ total: 1, perPage: 50, currentPage: 1, lastPage: 1 });
    const del = await api.delete(`/v1/sitemap/entries/${res.body.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: expect.any(String) });
    expect((await api.put(`/v1/sitemap/entries/${res.body.id}`, { title: 'x' })).status).toBe(404);
    expect((await api.delete('/v1/sitemap/entries/not-a-uuid')).status).toBe(422);
  });

  it('holds url to 1-2048 and http(s) or a path, priority to 0-1, changefreq to the enum, title to 255, and one URL once', async () => {
    const api = await site();
    expect((await api.post('/v1/sitemap/entries', { url: `/${'a'.repeat(2047)}`, title: 't'.repeat(255), priority: 1 })).status).toBe(201);
    for (const [body, field] of [
      [{ url: `/${'a'.repeat(2048)}` }, 'url'],
      [{ url: '' }, 'url'],
      [{ url: 'javascript:alert(1)' }, 'url'],
      [{ url: '/p', priority: 1.5 }, 'priority'],
      [{ url: '/p', changefreq: 'often' }, 'changefreq'],
      [{ url: '/p', title: 't'.repeat(256) }, 'title'],
      [{ url: '/p', lastModified: '2026-02-30T00:00:00Z' }, 'lastModified'],
      [{}, 'url'],
    ] as const) {
      const res = await api.post('/v1/sitemap/entries', body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(422);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    await api.post('/v1/sitemap/entries', { url: 'https://other.test/x', isExternal: true });
    const dup = await api.post('/v1/sitemap/entries', { url: 'https://other.test/x' });
    expect(dup.status).toBe(422);
    expectErrorShape(dup.body, 422);
    expect(dup.body.errors).toHaveProperty('url');
  });

  it('imports { entries } and CSV (201, rows numbered, duplicates skipped) and exports CSV with the spec columns', async () => {
    const api = await site();
    await api.post('/v1/sitemap/entries', { url: '/kept' });
    const json = await api.post('/v1/sitemap/entries/import', {
      entries: [{ url: '/a' }, { url: '/kept' }, { url: 'ftp://x' }, { url: '/a' }, { url: '/b', priority: 0.7 }],
    });
    expect(json.status).toBe(201);
    expect(json.body).toMatchObject({ imported: 2, skipped: 2, errorCount: 1, errors: [{ row: 3, field: 'url' }] });
    const { payload, headers } = multipart(
      'url,priority,changefreq,title,is_external,last_modified\r\n/c,0.3,monthly,"Title, with comma",false,\r\nhttps://x.test/y,,,,true,2026-01-02T00:00:00Z\r\n/d,7,,,,\r\n',
    );
    const csv = await ctx.app.inject({
      method: 'POST',
      url: '/v1/sitemap/entries/import',
      payload,
      headers: { ...headers, authorization: `Bearer ${api.token}` },
    });
    expect(csv.statusCode, csv.body).toBe(201);
    expect(csv.json()).toMatchObject({ imported: 2, errorCount: 1, errors: [{ row: 3, field: 'priority' }] });
    const out = await api.get('/v1/sitemap/entries/export');
    expect(out.headers['content-type']).toBe('text/csv; charset=utf-8');
    const lines = out.text.trim().split('\r\n');
    expect(lines[0]).toBe('url,priority,changefreq,title,is_external,last_modified');
    expect(lines).toContain('/c,0.3,monthly,"Title, with comma",false,');
    expect(lines).toContain('https://x.test/y,0.5,weekly,,true,2026-01-02T00:00:00.000Z');
    expect(lines).toHaveLength(6);
  });
});

describe('sitemap.xml and sitemap.json (decisions S1, G18, G20)', () => {
  it('lists published contents at their URLs with reciprocal hreflang alternates and x-default, then custom entries, XML-escaped', async () => {
    const api = await site(['en', 'de']);
    await api.put('/v1/seo/settings', { contentTypePriorities: { post: 0.8 }, defaultChangefreq: 'daily' });
    const en = await post(api, { slug: 'tea', status: 'published' });
    const de = (await api.post(`/v1/contents/${en.id}/copy-to-locale`, { locale: 'de' })).body.data;
    await api.put(`/v1/contents/${de.id}`, { slug: 'tee', status: 'published' });
    await post(api, { slug: 'hidden-draft' });
    await api.post('/v1/sitemap/entries', { url: '/search?q=a&b=<c>', priority: 0.3, changefreq: 'never', lastModified: '2026-01-01T00:00:00Z' });
    const res = await api.get('/v1/seo/sitemap.xml');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
    const xml = res.text;
    expect(
      xml.startsWith(
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">\n',
      ),
    ).toBe(true);
    expect(xml).not.toContain('hidden-draft');
    const urls = [...xml.matchAll(/<url>(.*?)<\/url>/g)].map((m) => m[1]!);
    expect(urls).toHaveLength(3);
    const alternates =
      '<xhtml:link rel="alternate" hreflang="de" href="https://example.test/de/blog/tee"/>' +
      '<xhtml:link rel="alternate" hreflang="en" href="https://example.test/blog/tea"/>' +
      '<xhtml:link rel="alternate" hreflang="x-default" href="https://example.test/blog/tea"/>';
    expect(urls[0]).toMatch(
      /^<loc>https:\/\/example\.test\/blog\/tea<\/loc><lastmod>[^<]+<\/lastmod><changefreq>daily<\/changefreq><priority>0\.8<\/priority>/,
    );
    expect(urls[0]!.endsWith(alternates)).toBe(true);
    expect(urls[1]).toMatch(/^<loc>https:\/\/example\.test\/de\/blog\/tee<\/loc>/);
    expect(urls[1]!.endsWith(alternates)).toBe(true);
    expect(urls[2]).toBe(
      '<loc>https://example.test/search?q=a&amp;b=&lt;c&gt;</loc><lastmod>2026-01-01T00:00:00.000Z</lastmod><changefreq>never</changefreq><priority>0.3</priority>',
    );
    const json = await api.get('/v1/seo/sitemap.json');
    expect(json.body.data).toHaveLength(3);
    expect(json.body.data[2]).toEqual({
      url: 'https://example.test/search?q=a&b=<c>',
      lastmod: '2026-01-01T00:00:00.000Z',
      changefreq: 'never',
      priority: 0.3,
    });
    const preview = await api.get('/v1/sitemap/preview');
    expect(preview.body.data.map((p: any) => p.source)).toEqual(['content', 'content', 'custom']);
    await api.put('/v1/seo/settings', { includeContentsInSitemap: false });
    expect((await api.get('/v1/seo/sitemap.json')).body.data).toHaveLength(1);
  });

  it('is an index of parts when the site asks for one, served with the site key with ETag and 304', async () => {
    const api = await site();
    await post(api, { slug: 'one', status: 'published' });
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const anon = client(ctx.app);
    const plain = await anon.get(`/v1/public/sitemap.xml?siteKey=${key}`);
    expect(plain.status).toBe(200);
    expect(plain.text).toContain('<urlset');
    const etag = String(plain.headers.etag);
    expect((await anon.get('/v1/public/sitemap.xml', { 'x-site-key': key, 'if-none-match': etag })).status).toBe(304);
    await api.put('/v1/seo/settings', { sitemapIndexEnabled: true });
    // Public outputs see a change within a second (decisions S14).
    await new Promise((r) => setTimeout(r, 1100));
    const index = await anon.get('/v1/public/sitemap.xml', { 'x-site-key': key, 'if-none-match': etag });
    expect(index.status).toBe(200);
    expect(index.text).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<sitemapindex xmlns="http:\/\/www.sitemaps.org\/schemas\/sitemap\/0.9">\n<sitemap><loc>https:\/\/example.test\/sitemap-1.xml<\/loc><lastmod>[^<]+<\/lastmod><\/sitemap>\n<\/sitemapindex>\n$/,
    );
    const part = await anon.get('/v1/public/sitemap-1.xml', { 'x-site-key': key });
    expect(part.status).toBe(200);
    expect(part.text).toContain('<loc>https://example.test/blog/one</loc>');
    expect((await anon.get('/v1/public/sitemap-2.xml', { 'x-site-key': key })).status).toBe(404);
    expect((await anon.get('/v1/public/sitemap.xml')).status).toBe(401);
  });

  it('splits into files of at most 50,000 URLs', () => {
    const urls: SitemapUrl[] = Array.from({ length: URLS_PER_FILE + 1 }, (_, i) => ({
      loc: `https://x.test/p${i}`,
      lastmod: i === URLS_PER_FILE ? '2026-02-01T00:00:00.000Z' : '2026-01-01T00:00:00.000Z',
      changefreq: 'weekly',
      priority: 0.5,
      source: 'custom',
    }));
    const index = sitemapIndexXml({ domain: 'x.test' }, urls);
    expect([...index.matchAll(/<sitemap>/g)]).toHaveLength(2);
    expect(index).toContain('<sitemap><loc>https://x.test/sitemap-2.xml</loc><lastmod>2026-02-01T00:00:00.000Z</lastmod></sitemap>');
    expect([...urlsetXml(urls.slice(0, URLS_PER_FILE)).matchAll(/<url>/g)]).toHaveLength(URLS_PER_FILE);
  });
});

describe('sitemap rules and sources (decisions S1, S10, S11)', () => {
  it('creates, lists in order, updates and deletes rules, with each field held to its limits', async () => {
    const api = await site();
    const a = await api.post('/v1/sitemap/rules', { sourceType: 'tag', sourceValue: 'news', priority: 0.9, changefreq: 'hourly', ruleOrder: 5 });
    expect(a.status).toBe(201);
    expect(a.body.data).toEqual({
      id: expect.any(Number),
      sourceType: 'tag',
      sourceValue: 'news',
      priority: 0.9,
      changefreq: 'hourly',
      ruleOrder: 5,
      isActive: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const b = await api.post('/v1/sitemap/rules', { sourceType: 'content_type', sourceValue: 'post', priority: 0.4, changefreq: 'monthly' });
    expect((await api.get('/v1/sitemap/rules')).body.data.map((r: any) => r.id)).toEqual([b.body.data.id, a.body.data.id]);
    for (const [body, field] of [
      [{ sourceType: 'author', sourceValue: 'x', priority: 0.5, changefreq: 'daily' }, 'sourceType'],
      [{ sourceType: 'tag', sourceValue: '', priority: 0.5, changefreq: 'daily' }, 'sourceValue'],
      [{ sourceType: 'tag', sourceValue: 'x'.repeat(256), priority: 0.5, changefreq: 'daily' }, 'sourceValue'],
      [{ sourceType: 'path_pattern', sourceValue: 'blog/*', priority: 0.5, changefreq: 'daily' }, 'sourceValue'],
      [{ sourceType: 'tag', sourceValue: 'x', priority: 2, changefreq: 'daily' }, 'priority'],
      [{ sourceType: 'tag', sourceValue: 'x', priority: 0.5 }, 'changefreq'],
    ] as const) {
      const res = await api.post('/v1/sitemap/rules', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    expect((await api.put(`/v1/sitemap/rules/${a.body.data.id}`, { sourceType: 'path_pattern' })).status).toBe(422);
    const upd = await api.put(`/v1/sitemap/rules/${a.body.data.id}`, { isActive: false });
    expect(upd.body.data).toMatchObject({ isActive: false, sourceValue: 'news' });
    expect((await api.delete(`/v1/sitemap/rules/${a.body.data.id}`)).status).toBe(200);
    expect((await api.delete(`/v1/sitemap/rules/${a.body.data.id}`)).status).toBe(404);
  });

  it('gives each content the priority and change frequency of the first matching active rule', async () => {
    const api = await site();
    const travel = (await api.post('/v1/categories', { name: 'Travel', slug: 'travel' })).body.data;
    const news = (await api.post('/v1/tags', { name: 'News', slug: 'news' })).body.data;
    await post(api, { slug: 'in-travel', status: 'published', categoryIds: [travel.id] });
    await post(api, { slug: 'tagged', status: 'published', tagIds: [news.id] });
    await post(api, { slug: 'archive-2019', status: 'published' });
    await post(api, { slug: 'plain', status: 'published' });
    await api.post('/v1/sitemap/entries', { url: '/blog/custom', priority: 0.1, changefreq: 'yearly' });
    await api.post('/v1/sitemap/rules', { sourceType: 'category', sourceValue: 'travel', priority: 0.9, changefreq: 'daily', ruleOrder: 1 });
    await api.post('/v1/sitemap/rules', { sourceType: 'tag', sourceValue: 'news', priority: 1, changefreq: 'hourly', ruleOrder: 2 });
    await api.post('/v1/sitemap/rules', { sourceType: 'path_pattern', sourceValue: '/blog/archive-*', priority: 0.2, changefreq: 'never', ruleOrder: 3 });
    await api.post('/v1/sitemap/rules', { sourceType: 'content_type', sourceValue: 'post', priority: 0.6, changefreq: 'weekly', ruleOrder: 9 });
    await api.post('/v1/sitemap/rules', {
      sourceType: 'content_type',
      sourceValue: 'post',
      priority: 0.3,
      changefreq: 'monthly',
      ruleOrder: 0,
      isActive: false,
    });
    const byUrl = Object.fromEntries(
      (await api.get('/v1/seo/sitemap.json')).body.data.map((u: any) => [u.url.replace('https://example.test', ''), [u.priority, u.changefreq]]),
    );
    expect(byUrl).toEqual({
      '/blog/in-travel': [0.9, 'daily'],
      '/blog/tagged': [1, 'hourly'],
      '/blog/archive-2019': [0.2, 'never'],
      '/blog/plain': [0.6, 'weekly'],
      '/blog/custom': [0.1, 'yearly'],
    });
  });

  it('lists active sources in the sitemap index after its own parts', async () => {
    const api = await site();
    const src = await api.post('/v1/sitemap/sources', { name: 'Shop', url: 'https://shop.example.test/sitemap.xml' });
    expect(src.status).toBe(201);
    expect(src.body.data).toMatchObject({ id: expect.any(Number), name: 'Shop', url: 'https://shop.example.test/sitemap.xml', isActive: true });
    expect((await api.post('/v1/sitemap/sources', { name: 'Bad', url: '/relative' })).status).toBe(422);
    expect((await api.post('/v1/sitemap/sources', { name: '', url: 'https://x.test/s.xml' })).status).toBe(422);
    const xml = (await api.get('/v1/seo/sitemap.xml')).text;
    expect(xml).toContain('<sitemapindex');
    expect(xml.indexOf('sitemap-1.xml')).toBeLessThan(xml.indexOf('<sitemap><loc>https://shop.example.test/sitemap.xml</loc></sitemap>'));
    await api.put(`/v1/sitemap/sources/${src.body.data.id}`, { isActive: false });
    expect((await api.get(`/v1/sitemap/sources/${src.body.data.id}`)).body.data.isActive).toBe(false);
    expect((await api.get('/v1/seo/sitemap.xml')).text).toContain('<urlset');
    expect((await api.get('/v1/sitemap/sources')).body.data).toHaveLength(1);
    expect((await api.delete(`/v1/sitemap/sources/${src.body.data.id}`)).status).toBe(200);
    expect((await api.get(`/v1/sitemap/sources/${src.body.data.id}`)).status).toBe(404);
  });
});
