import { describe, expect, it } from 'vitest';
import { client, expectErrorShape } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { AI_ASSISTANT_CRAWLERS, AI_TRAINING_CRAWLERS } from './seo.robots.js';
import { contentPath, type UrlContext } from './seo.urls.js';
import { OutputCache } from './seo.cache.js';

const ctx = useTestApp();
const site = ctx.site;

describe('GET and PUT /v1/seo/settings', () => {
  it('answers the defaults as a bare object before anything is saved', async () => {
    const api = await site();
    const res = await api.get('/v1/seo/settings');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      siteId: api.siteId,
      robotsRules: [{ userAgent: '*', rules: [{ path: '/', allow: true }] }],
      robotsSitemapLink: true,
      aiCrawlers: 'allow',
      defaultPriority: 0.5,
      defaultChangefreq: 'weekly',
      includeContentsInSitemap: true,
      contentPathPrefixes: {},
      contentTypePriorities: {},
      blogUrlMode: 'flat',
      blogPrefix: 'blog',
      indexNowKey: null,
      indexNowEnabled: false,
      indexNowLastVerifiedAt: null,
      searchIndexingEnabled: false,
      llmsTxtEnabled: false,
      llmsSiteDescription: null,
      sitemapIndexEnabled: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await api.get('/v1/seo/settings')).body.id).toBe(res.body.id);
  });

  it('changes only the fields sent, trims slashes from prefixes, and keeps each site its own', async () => {
    const api = await site();
    const other = await site();
    const res = await api.put('/v1/seo/settings', {
      blogUrlMode: 'nested',
      blogPrefix: '/news/',
      contentPathPrefixes: { post: 'articles/' },
      contentTypePriorities: { post: 0.8 },
      defaultPriority: 0,
      defaultChangefreq: 'daily',
      indexNowKey: 'abcdef12-3456',
      indexNowEnabled: true,
      llmsTxtEnabled: true,
      llmsSiteDescription: 'A travel blog.',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      blogUrlMode: 'nested',
      blogPrefix: 'news',
      contentPathPrefixes: { post: 'articles' },
      contentTypePriorities: { post: 0.8 },
      defaultPriority: 0,
      defaultChangefreq: 'daily',
      indexNowKey: 'abcdef12-3456',
      indexNowEnabled: true,
      robotsSitemapLink: true,
      llmsSiteDescription: 'A travel blog.',
    });
    expect((await api.get('/v1/seo/settings')).body).toEqual(res.body);
    expect((await other.get('/v1/seo/settings')).body.blogPrefix).toBe('blog');
    expect((await api.put('/v1/seo/settings', { blogPrefix: null })).body.blogPrefix).toBeNull();
  });

  it('holds every field to its limits with a 422 naming it, and changes nothing then', async () => {
    const api = await site();
    const ok = await api.put('/v1/seo/settings', { defaultPriority: 1, indexNowKey: 'k'.repeat(64) });
    expect(ok.status).toBe(200);
    for (const [body, field] of [
      [{ defaultPriority: 1.01 }, 'defaultPriority'],
      [{ defaultPriority: -0.1 }, 'defaultPriority'],
      [{ defaultChangefreq: 'sometimes' }, 'defaultChangefreq'],
      [{ blogUrlMode: 'deep' }, 'blogUrlMode'],
      [{ blogPrefix: 'Has Spaces' }, 'blogPrefix'],
      [{ blogPrefix: '../up' }, 'blogPrefix'],
      [{ indexNowKey: 'short' }, 'indexNowKey'],
      [{ indexNowKey: 'k'.repeat(65) }, 'indexNowKey'],
      [{ indexNowKey: 'has space!' }, 'indexNowKey'],
      [{ contentTypePriorities: { post: 2 } }, 'contentTypePriorities.post'],
      [{ contentPathPrefixes: { post: 'a b' } }, 'contentPathPrefixes.post'],
      [{ aiCrawlers: 'maybe' }, 'aiCrawlers'],
      [{ robotsRules: [{ userAgent: 'Bad\nAgent', rules: [] }] }, 'robotsRules[0].userAgent'],
      [{ robotsRules: [{ userAgent: '*', rules: [{ path: 'no-slash', allow: false }] }] }, 'robotsRules[0].rules[0].path'],
      [{ llmsSiteDescription: 'd'.repeat(2001) }, 'llmsSiteDescription'],
      [{}, 'body'],
    ] as const) {
      const res = await api.put('/v1/seo/settings', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expectErrorShape(res.body, 422);
      expect(Object.keys(res.body.errors), JSON.stringify(res.body.errors)).toContain(field);
    }
    expect((await api.get('/v1/seo/settings')).body).toEqual(ok.body);
  });

  it('refuses to enable IndexNow without a key, and clears the verification when the key changes', async () => {
    const api = await site();
    const res = await api.put('/v1/seo/settings', { indexNowEnabled: true });
    expect(res.status).toBe(422);
    expect(res.body.errors).toHaveProperty('indexNowKey');
    expect((await api.put('/v1/seo/settings', { indexNowEnabled: true, indexNowKey: '12345678' })).status).toBe(200);
    const removed = await api.put('/v1/seo/settings', { indexNowKey: null });
    expect(removed.status).toBe(422);
    expect((await api.get('/v1/seo/settings')).body.indexNowKey).toBe('12345678');
  });
});

describe('robots.txt (decisions S2, S4)', () => {
  it('renders the groups in order, the AI crawler group and the Sitemap line', async () => {
    const api = await site();
    await api.put('/v1/seo/settings', {
      robotsRules: [
        {
          userAgent: '*',
          rules: [
            { path: '/', allow: true },
            { path: '/admin/', allow: false },
          ],
        },
        { userAgent: 'BadBot', rules: [{ path: '/', allow: false }] },
        { userAgent: 'Quiet', rules: [] },
      ],
      aiCrawlers: 'block-training',
    });
    const res = await api.get('/v1/seo/robots.txt');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    const blocked = AI_TRAINING_CRAWLERS.map((a) => `User-agent: ${a}`).join('\n');
    expect(res.text).toBe(
      'User-agent: *\nAllow: /\nDisallow: /admin/\n\nUser-agent: BadBot\nDisallow: /\n\nUser-agent: Quiet\nDisallow:\n\n' +
        `# AI crawlers (block-training)\n${blocked}\nDisallow: /\n\nSitemap: https://example.test/sitemap.xml\n`,
    );
    expect(res.text).not.toContain('ChatGPT-User');
    await api.put('/v1/seo/settings', { aiCrawlers: 'block-all', robotsSitemapLink: false });
    const all = (await api.get('/v1/seo/robots.txt')).text;
    for (const agent of [...AI_TRAINING_CRAWLERS, ...AI_ASSISTANT_CRAWLERS]) expect(all).toContain(`User-agent: ${agent}\n`);
    expect(all).not.toContain('Sitemap:');
  });

  it('is served with the site key, with ETag, Cache-Control and 304, and changes with the settings', async () => {
    const api = await site();
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const anon = client(ctx.app);
    const first = await anon.get('/v1/public/robots.txt', { 'x-site-key': key });
    expect(first.status).toBe(200);
    expect(first.text).toContain('User-agent: *');
    expect(first.headers['cache-control']).toBe('public, max-age=300');
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^".+"$/);
    const again = await anon.get('/v1/public/robots.txt', { 'x-site-key': key, 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    await api.put('/v1/seo/settings', { robotsRules: [{ userAgent: '*', rules: [{ path: '/private', allow: false }] }] });
    expect((await api.get('/v1/seo/robots.txt')).text).toContain('Disallow: /private');
    const changed = await anon.get('/v1/public/robots.txt', { 'x-site-key': key, 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.text).toContain('Disallow: /private');
    expect((await anon.get('/v1/public/robots.txt')).status).toBe(401);
  });

  it('answers a write in the next public read on the instance that made it: the new body, and no 304 to the old ETag (decisions S17)', async () => {
    const api = await site();
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const anon = client(ctx.app);
    const first = await anon.get('/v1/public/robots.txt', { 'x-site-key': key });
    const etag = String(first.headers.etag);
    expect(first.text).not.toContain('Disallow: /drafts');
    expect((await anon.get('/v1/public/robots.txt', { 'x-site-key': key, 'if-none-match': etag })).status).toBe(304);
    await api.put('/v1/seo/settings', { robotsRules: [{ userAgent: '*', rules: [{ path: '/drafts', allow: false }] }] });
    // No wait: the write moved the site's generation when it answered.
    const changed = await anon.get('/v1/public/robots.txt', { 'x-site-key': key, 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.text).toContain('Disallow: /drafts');
    expect(changed.headers.etag).not.toBe(etag);
  });
});

describe('the URL builder (decisions G18)', () => {
  const base: UrlContext = { domain: 'x.test', defaultLocale: 'en', hideDefaultLocale: true, blogUrlMode: 'flat', blogPrefix: 'blog', contentPathPrefixes: {} };
  it('builds locale prefix, type prefix, category path and slug', () => {
    expect(contentPath(base, { slug: 'lisbon', locale: 'en', type: 'post' })).toBe('/blog/lisbon');
    expect(contentPath(base, { slug: 'lisbon', locale: 'pt-BR', type: 'post' })).toBe('/pt-br/blog/lisbon');
    expect(contentPath({ ...base, hideDefaultLocale: false }, { slug: 'a', locale: 'en', type: 'post' })).toBe('/en/blog/a');
    expect(contentPath({ ...base, blogPrefix: null }, { slug: 'a', locale: 'en', type: 'post' })).toBe('/a');
    expect(contentPath({ ...base, contentPathPrefixes: { post: 'news/articles' } }, { slug: 'a', locale: 'en', type: 'post' })).toBe('/news/articles/a');
    const nested = { ...base, blogUrlMode: 'nested' as const };
    expect(contentPath(nested, { slug: 'a', locale: 'en', type: 'post', categoryPath: ['travel', 'europe'] })).toBe('/blog/travel/europe/a');
    expect(contentPath(nested, { slug: 'a', locale: 'en', type: 'post', categoryPath: [] })).toBe('/blog/a');
    expect(contentPath(base, { slug: 'ü ber', locale: 'en', type: 'post' })).toBe('/blog/%C3%BC%20ber');
  });
});

describe('generated outputs cache (decisions S14)', () => {
  it('builds once while nothing changes, rebuilds after any change of the site, and holds at most its byte budget', async () => {
    const api = await site();
    const cache = new OutputCache(ctx.app.deliveryCache.generationOf, 10);
    let builds = 0;
    const build = async () => `built ${++builds}`;
    const [a, b] = await Promise.all([cache.get(api.siteId, 'x', build), cache.get(api.siteId, 'x', build)]);
    expect(builds).toBe(1);
    expect(a).toBe(b);
    expect((await cache.get(api.siteId, 'x', build)).body.toString()).toBe('built 1');
    for (const change of [
      () => api.post('/v1/tags', { name: 'New tag' }),
      () => api.put('/v1/seo/settings', { defaultPriority: 0.4 }),
      () => api.post('/v1/sitemap/entries', { url: '/new' }),
      () => api.post('/v1/contents', { type: 'post', title: 'New', bodyMarkdown: 'x' }),
    ]) {
      const before = builds;
      await new Promise((r) => setTimeout(r, 2));
      await change();
      const out = await cache.get(api.siteId, 'x', build);
      expect(builds, String(change)).toBe(before + 1);
      expect(out.etag).toMatch(/^".{27}"$/);
    }
    // A 10-byte budget holds one 7-byte output: the other is built again.
    await cache.get(api.siteId, 'y', build);
    const n = builds;
    await cache.get(api.siteId, 'x', build);
    expect(builds).toBe(n + 1);
  });
});
