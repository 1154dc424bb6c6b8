import { describe, expect, it } from 'vitest';
import { client } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { llmsFull, SECTION_SIZE } from './llms.service.js';

const ctx = useTestApp();
const site = ctx.site;
type Api = Awaited<ReturnType<typeof site>>;

async function post(api: Api, body: Record<string, unknown>) {
  const res = await api.post('/v1/contents', { type: 'post', title: 'A post', bodyMarkdown: 'Text.', status: 'published', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data ?? res.body;
}

describe('llms.txt, llms-full.txt and markdown (decisions S3, S9)', () => {
  it('answers 404 on every output while llmsTxtEnabled is off', async () => {
    const api = await site();
    await post(api, { slug: 'x' });
    for (const path of ['/v1/llms.txt', '/v1/llms-full.txt', '/v1/markdown/content/x']) {
      const res = await api.get(path);
      expect(res.status, path).toBe(404);
      expect(res.body.message).toContain('llmsTxtEnabled');
    }
  });

  it('sends every generated output with nosniff, through a token and the site key (issue 36 item 8)', async () => {
    const api = await site();
    await api.put('/v1/seo/settings', { llmsTxtEnabled: true });
    await post(api, { slug: 'sniffed', title: '<script>alert(1)</script>' });
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const anon = client(ctx.app);
    const outputs = ['robots.txt', 'sitemap.xml', 'llms.txt', 'llms-full.txt', 'markdown/content/sniffed'];
    for (const path of outputs) {
      for (const res of [
        await api.get(`/v1/${path === 'robots.txt' || path === 'sitemap.xml' ? `seo/${path}` : path}`),
        await anon.get(`/v1/public/${path}`, { 'x-site-key': key }),
      ]) {
        expect(res.status, path).toBe(200);
        expect(res.headers['x-content-type-options'], path).toBe('nosniff');
      }
    }
  });

  it('follows the llmstxt.org structure: H1, summary, a section per category, Optional for older items', async () => {
    const api = await site();
    await api.put('/v1/seo/settings', { llmsTxtEnabled: true, llmsSiteDescription: 'Travel notes\nfrom Lisbon.' });
    const travel = (await api.post('/v1/categories', { name: 'Travel' })).body.data;
    await post(api, { title: 'Tram [28]', slug: 'tram', excerpt: 'The yellow tram.', categoryIds: [travel.id] });
    await post(api, { title: 'Hello', slug: 'hello' });
    await post(api, { title: 'Draft', slug: 'draft', status: 'draft' });
    const res = await api.get('/v1/llms.txt');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    const name = (await api.get('/v1/site/info')).body.data.name;
    expect(res.text).toBe(
      `# ${name}\n\n> Travel notes from Lisbon.\n\n## Travel\n\n- [Tram \\[28\\]](https://example.test/blog/tram): The yellow tram.\n\n## Posts\n\n- [Hello](https://example.test/blog/hello)\n\n`,
    );
  });

  it('moves items past the newest of each section under ## Optional', async () => {
    const api = await site();
    await api.put('/v1/seo/settings', { llmsTxtEnabled: true });
    for (let i = 0; i <= SECTION_SIZE; i++) await post(api, { title: `Post ${i}`, slug: `p-${i}`, publishedAt: undefined });
    const text = (await api.get('/v1/llms.txt')).text;
    const [main, optional] = text.split('## Optional\n\n');
    expect(main!.match(/^- \[/gm)).toHaveLength(SECTION_SIZE);
    expect(optional!.trim().split('\n')).toHaveLength(1);
  });

  it('streams every published content as markdown in llms-full.txt, with an ETag that changes with the content', async () => {
    const api = await site();
    await api.put('/v1/seo/settings', { llmsTxtEnabled: true });
    await post(api, { title: 'First', slug: 'first', bodyMarkdown: '## Intro\n\nSome **bold** text.' });
    const second = await post(api, { title: 'Second', slug: 'second', bodyMarkdown: '- a\n- b' });
    const res = await api.get('/v1/llms-full.txt');
    expect(res.status).toBe(200);
    expect(res.text).toContain('---\n\nURL: https://example.test/blog/first\n\n# First\n\n## Intro\n\nSome **bold** text.\n');
    expect(res.text).toContain('# Second\n\n- a\n- b\n');
    expect(res.text.indexOf('# First')).toBeLessThan(res.text.indexOf('# Second'));
    const etag = String(res.headers.etag);
    expect((await api.get('/v1/llms-full.txt', { 'if-none-match': etag })).status).toBe(304);
    await api.put(`/v1/contents/${second.id}`, { title: 'Second, edited' });
    expect((await api.get('/v1/llms-full.txt', { 'if-none-match': etag })).status).toBe(200);
  });

  it('stops llms-full.txt at its size cap with a note, never cutting a content in half', async () => {
    const api = await site();
    await api.put('/v1/seo/settings', { llmsTxtEnabled: true });
    for (let i = 0; i < 5; i++) await post(api, { title: `Long ${i}`, slug: `long-${i}`, bodyMarkdown: 'word '.repeat(40) });
    let text = '';
    for await (const chunk of await llmsFull(ctx.app.database.db, api.siteId, 600)) text += chunk;
    expect(text).toContain('# Long 0');
    expect(text).not.toContain('# Long 4');
    expect(text).toMatch(/\[llms-full\.txt stops here: it is capped at 600 bytes\. Every page is listed in llms\.txt\.\]\n$/);
    expect(Buffer.byteLength(text.slice(0, text.lastIndexOf('---')))).toBeLessThanOrEqual(600);
    expect((text.match(/word/g) ?? []).length % 40).toBe(0);
  });

  it('serves a content as markdown by slug and locale, and the public twins with the site key', async () => {
    const api = await site(['en', 'de']);
    await api.put('/v1/seo/settings', { llmsTxtEnabled: true });
    await post(api, { title: 'Tea', slug: 'tea', bodyMarkdown: 'Green *tea*.' });
    await post(api, { title: 'Tee', slug: 'tea', locale: 'de', bodyMarkdown: 'Grüner Tee.' });
    const md = await api.get('/v1/markdown/content/tea');
    expect(md.status).toBe(200);
    expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(md.text).toBe('# Tea\n\nGreen *tea*.\n');
    expect((await api.get('/v1/markdown/content/tea?locale=de')).text).toBe('# Tee\n\nGrüner Tee.\n');
    expect((await api.get('/v1/markdown/content/nope')).status).toBe(404);
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const anon = client(ctx.app);
    const pub = await anon.get('/v1/public/llms.txt', { 'x-site-key': key });
    expect(pub.status).toBe(200);
    expect(pub.headers['cache-control']).toBe('public, max-age=300');
    expect((await anon.get('/v1/public/llms.txt', { 'x-site-key': key, 'if-none-match': String(pub.headers.etag) })).status).toBe(304);
    expect((await anon.get(`/v1/public/markdown/content/tea?siteKey=${key}`)).text).toBe('# Tea\n\nGreen *tea*.\n');
    expect((await anon.get('/v1/public/llms-full.txt', { 'x-site-key': key })).text).toContain('# Tee');
    expect((await anon.get('/v1/public/llms.txt')).status).toBe(401);
  });
});
