import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { client } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';

/**
 * The sitemap outputs against the sitemaps.org XSDs (test/fixtures/xsd: namespace, element order,
 * value types, escaping, and the xhtml:link alternates through the schema's strict `xsd:any`),
 * validated by libxml2's xmllint (WebAssembly), and hreflang reciprocity over a site with
 * contents and pages in three locales.
 */
const ctx = useTestApp();
const XSD_DIR = path.resolve(import.meta.dirname, '../../../test/fixtures/xsd');
const xsd = (name: string) => ({ fileName: name, contents: readFileSync(path.join(XSD_DIR, name), 'utf8') });

async function validate(xml: string, schema: 'sitemap.xsd' | 'siteindex.xsd') {
  const result = await validateXML({ xml: [{ fileName: 'output.xml', contents: xml }], schema: [xsd(schema)], preload: [xsd('xhtml-link.xsd')] });
  return result.errors.map((e) => e.rawMessage);
}

/** loc -> its alternates (hreflang -> href), from a urlset. */
function alternatesByLoc(xml: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const [, body] of xml.matchAll(/<url>(.*?)<\/url>/g)) {
    const loc = /<loc>([^<]*)<\/loc>/.exec(body!)![1]!;
    out.set(loc, new Map([...body!.matchAll(/<xhtml:link rel="alternate" hreflang="([^"]+)" href="([^"]+)"\/>/g)].map((m) => [m[1]!, m[2]!])));
  }
  return out;
}

describe('sitemap XML against the sitemaps.org schemas (issue 13)', () => {
  it('validates a urlset with translated contents, pages and escaped custom entries; alternates are reciprocal', async () => {
    const api = await ctx.site(['en', 'de', 'fr']);
    for (const [i, title] of ['Tea & <biscuits>', 'Coffee "strong"', "Water's edge"].entries()) {
      const en = (await api.post('/v1/contents', { type: 'post', title, slug: `post-${i}`, status: 'published', bodyMarkdown: 'x' })).body.data;
      for (const locale of i === 2 ? ['de'] : ['de', 'fr']) {
        const copy = (await api.post(`/v1/contents/${en.id}/copy-to-locale`, { locale })).body.data;
        expect((await api.put(`/v1/contents/${copy.id}?locale=${locale}`, { status: 'published' })).status).toBe(200);
      }
    }
    const page = (await api.post('/v1/site-blocks', { name: 'About', type: 'page', path: '/about-us' })).body.data;
    await api.post('/v1/site-blocks/about/publish');
    await api.post('/v1/site-blocks', { name: 'Über', type: 'page', path: '/uber', locale: 'de', translationGroup: page.translationGroup });
    await api.post('/v1/site-blocks/uber/publish?locale=de');
    await api.post('/v1/sitemap/entries', { url: '/search?q=a&b=<c>&d="e"', priority: 0.3, changefreq: 'never', lastModified: '2026-01-01T00:00:00Z' });
    await api.post('/v1/sitemap/entries', { url: 'https://shop.example.test/café?x=1&y=2', priority: 1, changefreq: 'always' });

    const xml = (await api.get('/v1/seo/sitemap.xml')).text;
    expect(await validate(xml, 'sitemap.xsd')).toEqual([]);
    const byLoc = alternatesByLoc(xml);
    expect(byLoc.size).toBe(3 + 3 + 2 + 2 + 2);
    let translated = 0;
    for (const [loc, alternates] of byLoc) {
      if (!alternates.size) continue;
      translated++;
      // Each member lists itself, every other member, and x-default (the default locale's URL).
      expect([...alternates.values()]).toContain(loc);
      expect(alternates.get('x-default')).toBe(alternates.get('en'));
      for (const [hreflang, href] of alternates) {
        if (hreflang === 'x-default') continue;
        expect(byLoc.get(href), `${loc} names ${href}, which is not in the sitemap`).toBeDefined();
        expect(Object.fromEntries(byLoc.get(href)!), `${href} does not name ${loc} back`).toEqual(Object.fromEntries(alternates));
      }
    }
    expect(translated).toBe(10);

    // The same document shape breaks validation when it is wrong: the check can fail.
    expect(await validate(xml.replace('<changefreq>never</changefreq>', '<changefreq>sometimes</changefreq>'), 'sitemap.xsd')).not.toEqual([]);
    expect(await validate(xml.replace(/<priority>0\.3<\/priority>/, '<priority>0.3</priority><lastmod>2026-01-01</lastmod>'), 'sitemap.xsd')).not.toEqual([]);
    expect(await validate(xml.replace('hreflang="de"', 'hreflang="de_DE"'), 'sitemap.xsd')).not.toEqual([]);
    expect(await validate(xml.replace('&amp;', '&'), 'sitemap.xsd')).not.toEqual([]);
  });

  it('validates the sitemap index and its first part', async () => {
    const api = await ctx.site();
    await api.post('/v1/contents', { type: 'post', title: 'One', status: 'published', bodyMarkdown: 'x' });
    await api.put('/v1/seo/settings', { sitemapIndexEnabled: true });
    await api.post('/v1/sitemap/sources', { name: 'Shop', url: 'https://shop.example.test/sitemap.xml?a=1&b=2' });
    const index = (await api.get('/v1/seo/sitemap.xml')).text;
    expect(index).toContain('<sitemapindex');
    expect(await validate(index, 'siteindex.xsd')).toEqual([]);
    expect(await validate(index, 'sitemap.xsd')).not.toEqual([]);
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const part = (await client(ctx.app).get(`/v1/public/sitemap-1.xml?siteKey=${key}`)).text;
    expect(await validate(part, 'sitemap.xsd')).toEqual([]);
  });
});
