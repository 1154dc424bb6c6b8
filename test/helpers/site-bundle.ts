import { expect } from 'vitest';
import sharp from 'sharp';
import type { Config } from '../../src/config.js';
import { createToken } from '../../src/modules/api-tokens/api-tokens.service.js';
import { ownerOf } from '../../src/modules/users/users.service.js';
import { loadSecretBox } from '../../src/shared/secrets.js';
import type { TestApp } from './app.js';
import { type Client, client, multipartBody } from './http.js';
import type { SiteClient } from './suite.js';

/**
 * A site with every group a bundle carries filled through the API (issue 35), and what its
 * list and detail endpoints answer, ids aside, to compare a site with its imported copy.
 */
export async function upload(app: TestApp, api: SiteClient, filename: string, data: Buffer, fields: Record<string, string> = {}) {
  const { payload, headers } = multipartBody([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: 'file', filename, data, type: 'image/png' },
  ]);
  const res = await app.inject({ method: 'POST', url: '/v1/media/upload', payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
  expect(res.statusCode, res.body).toBe(201);
  return JSON.parse(res.body).data as { id: string; url: string };
}

export const png = (width: number, height: number, r = 200) =>
  sharp({ create: { width, height, channels: 3, background: { r, g: 40, b: 40 } } })
    .png()
    .toBuffer();

async function ok(res: Promise<{ status: number; body: any }>, status: number | 'any' = 200) {
  const r = await res;
  if (status === 'any') expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  else expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body.data ?? r.body;
}

/** Fills a site (locales en and de) with at least one record of every bundled group. */
export async function fillSite(app: TestApp, api: SiteClient) {
  await ok(api.put('/v1/site/settings', { description: 'A travel site', timezone: 'Europe/Berlin' }));
  const folder = await ok(api.post('/v1/media-folders', { name: 'Photos' }), 201);
  const sub = await ok(api.post('/v1/media-folders', { name: 'Summer', parentId: folder.id }), 201);
  const photo = await upload(app, api, 'beach.png', await png(900, 300), { alt: 'Beach', folderId: sub.id });
  const logo = await upload(app, api, 'logo.png', await png(40, 40, 10));
  await ok(api.put('/v1/site/settings', { logoUrl: logo.url }));

  const role = await ok(api.post('/v1/roles', { name: 'Reviewer', scopes: ['tags.view', 'contents.view'] }), 201);
  const writer = await ok(api.post('/v1/users', { fullName: 'Wanda Writer', email: 'wanda@example.test', roleId: role.id }), 201);
  await ok(api.post('/v1/users', { fullName: 'No Mail' }), 201);

  const travel = await ok(api.post('/v1/categories', { name: 'Travel', description: 'Trips' }), 201);
  const europe = await ok(api.post('/v1/categories', { name: 'Europe', parentId: travel.id }), 201);
  const tagA = await ok(api.post('/v1/tags', { name: 'Beaches' }), 201);
  const tagB = await ok(api.post('/v1/tags', { name: 'Food' }), 201);
  await ok(api.post(`/v1/tags/${tagA.id}/copy-to-locale`, { targetLocale: 'de' }), 'any');
  await ok(api.post('/v1/variables', { key: 'phone', label: 'Phone', value: '+49 30 1234' }), 201);
  await ok(api.post('/v1/single-types', { slug: 'home', name: 'Home', data: { hero: photo.url } }), 201);

  const post = await ok(
    api.post('/v1/contents', {
      type: 'post',
      title: 'Sunny beaches',
      status: 'published',
      bodyMarkdown: `Look:\n\n![Beach](${photo.url})\n\nSee [us](https://example.test/about).`,
      featuredImageUrl: `${photo.url}?w=400`,
      categoryIds: [europe.id, travel.id],
      tagIds: [tagB.id, tagA.id],
      authorId: writer.id,
      metaTitle: 'Beaches',
    }),
    201,
  );
  await ok(api.put(`/v1/contents/${post.id}`, { excerpt: 'Sand and sea' }));
  await ok(api.post(`/v1/contents/${post.id}/copy-to-locale`, { targetLocale: 'de' }), 'any');
  await ok(api.post('/v1/contents', { type: 'post', title: 'About us', bodyMarkdown: 'Hello', status: 'draft' }), 201);

  await ok(
    api.post('/v1/site-blocks', {
      name: 'Header',
      type: 'global',
      schema: [
        { name: 'title', type: 'string' },
        { name: 'logo', type: 'image' },
      ],
    }),
    201,
  );
  await ok(api.put('/v1/site-blocks/header/data', { data: { title: 'Welcome', logo: photo.id } }));
  await ok(api.post('/v1/site-blocks/header/publish'));
  await ok(api.put('/v1/site-blocks/header/data', { data: { title: 'Welcome back', logo: photo.id } }));
  await ok(api.put('/v1/site-blocks/settings', { stagedPublishing: true }));

  const form = await ok(
    api.post('/v1/forms', { name: 'Contact', status: 'active', schema: [{ name: 'email', type: 'email', required: true }], successMessage: 'Thanks' }),
    201,
  );
  const key = (await api.get('/v1/site/info')).body.data.publicKey;
  await ok(api.post(`/v1/public/forms/${form.slug}/submissions`, { email: 'visitor@example.com' }, { 'x-site-key': key }), 201);

  await ok(api.post('/v1/redirects', { sourcePath: '/old', targetUrl: '/new', note: 'moved' }), 201);
  await ok(api.put('/v1/redirects/settings', { logRetentionDays: 30 }));
  await ok(api.post('/v1/sitemap/entries', { url: '/landing', priority: 0.8 }), 201);
  await ok(api.post('/v1/sitemap/rules', { sourceType: 'category', sourceValue: 'travel', priority: 0.9, changefreq: 'daily', ruleOrder: 1 }), 201);
  await ok(api.post('/v1/sitemap/sources', { name: 'Shop', url: 'https://shop.example.test/sitemap.xml' }), 201);
  await ok(api.put('/v1/seo/settings', { llmsTxtEnabled: true, blogPrefix: 'journal' }));
  await ok(api.put('/v1/spam/settings', { blockedWords: ['casino'], captchaProvider: 'hcaptcha', captchaSiteKey: 'site-key-1', captchaSecret: 's3cret' }));
  await ok(api.put('/v1/cookie-consent/settings', { enabled: true, primaryColor: '#112233' }));
  await ok(api.put('/v1/analytics/settings', { rawRetentionDays: 60, excludedPaths: ['/admin/*'] }));
  await ok(api.put('/v1/settings/notifications', { recipientEmails: ['team@example.test'], contentPublished: true }));
  await ok(api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['content.published'], description: 'CI' }), 201);
  return { photo, logo, post, form };
}

/** Lists, and for each the detail endpoint of every item (`{id}` or `{slug}` from the list). */
const LISTS: Array<[list: string, detail?: string]> = [
  ['/v1/site/settings'],
  ['/v1/site/settings/language'],
  ['/v1/site/settings/i18n-detection'],
  ['/v1/settings/notifications'],
  ['/v1/categories?limit=100', '/v1/categories/{id}'],
  ['/v1/categories/tree'],
  ['/v1/tags?limit=100', '/v1/tags/{id}'],
  ['/v1/variables?limit=100', '/v1/variables/{id}'],
  ['/v1/single-types?limit=100', '/v1/single-types/{slug}'],
  ['/v1/contents?limit=100', '/v1/contents/{id}'],
  ['/v1/contents?limit=100&locale=de', '/v1/contents/{id}/translations'],
  ['/v1/contents?limit=100&type=post', '/v1/contents/{id}/revisions'],
  ['/v1/webhooks', '/v1/webhooks/{id}'],
  ['/v1/redirects?limit=100', '/v1/redirects/{id}'],
  ['/v1/redirects/settings'],
  ['/v1/seo/settings'],
  ['/v1/seo/robots.txt'],
  ['/v1/sitemap/entries?limit=100'],
  ['/v1/sitemap/rules'],
  ['/v1/sitemap/sources', '/v1/sitemap/sources/{id}'],
  ['/v1/llms.txt'],
  ['/v1/site-blocks?limit=100', '/v1/site-blocks/{slug}'],
  ['/v1/site-blocks?limit=100&type=global', '/v1/site-blocks/{slug}/revisions'],
  ['/v1/site-blocks/settings'],
  ['/v1/forms?limit=100', '/v1/forms/{id}'],
  ['/v1/forms?limit=100&status=active', '/v1/forms/{id}/submissions'],
  ['/v1/spam/settings'],
  ['/v1/media-folders', '/v1/media-folders/{id}'],
  ['/v1/media-folders/tree'],
  ['/v1/media?limit=100', '/v1/media/{id}'],
  ['/v1/media?limit=100&type=image', '/v1/media/{id}/references'],
  ['/v1/users?limit=100', '/v1/users/{id}'],
  ['/v1/roles?limit=100', '/v1/roles/{id}'],
  ['/v1/cookie-consent/settings'],
  ['/v1/analytics/settings'],
];

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const ID_KEY = /^(id|.*Id|.*Ids)$/;
/**
 * What differs between two sites by nature, not by import: the site's key (and the snippet that
 * holds it), its tokens' use; and what a bundle never carries (BN1): a visitor's address, the captcha secret.
 */
const OWN_KEYS = new Set(['publicKey', 'snippet', 'lastActiveAt', 'ipAddress', 'captchaSecretSet']);

/** A body with every id made `#` and every UUID `U` (both sides' ids differ; everything else must not). */
export function withoutIds(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return value.replace(UUID, 'U');
  if (typeof value === 'number' && ID_KEY.test(key)) return '#';
  if (Array.isArray(value)) return value.map((v) => withoutIds(v, ID_KEY.test(key) ? key : ''));
  if (value && typeof value === 'object') {
    // The site itself: its slug (made from its name, unique among sites) and times are the target's own.
    const site = 'publicKey' in value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !OWN_KEYS.has(k) && !(site && ['slug', 'createdAt', 'updatedAt'].includes(k)))
        .map(([k, v]) => [k, withoutIds(v, k)]),
    );
  }
  return value;
}

/** Every list and detail answer of a site, ids aside; `body` of each, keyed by its path pattern and position. */
export async function answersOf(api: Client): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [list, detail] of LISTS) {
    const res = await api.get(list);
    expect(res.status, `${list}: ${res.text}`).toBe(200);
    out[list] = withoutIds(res.body);
    if (!detail) continue;
    const items = (res.body.data ?? []) as Array<{ id: unknown; slug?: string }>;
    expect(items.length, `${list} is empty`).toBeGreaterThan(0);
    for (const [i, item] of items.entries()) {
      const url = detail.replace('{id}', String(item.id)).replace('{slug}', String(item.slug));
      const one = await api.get(url);
      expect(one.status, `${url}: ${one.text}`).toBe(200);
      out[`${detail} #${i}`] = withoutIds(one.body);
    }
  }
  return out;
}

/** The bytes a site serves for each of its media files and their variants, in list order. */
export async function filesOf(app: TestApp, api: Client): Promise<Buffer[]> {
  const out: Buffer[] = [];
  const media = (await api.get('/v1/media?limit=100')).body.data as Array<{ url: string; variants?: Record<string, string> | null }>;
  for (const m of media) {
    for (const url of [m.url, ...Object.values(m.variants ?? {})]) {
      const res = await app.inject({ method: 'GET', url: new URL(url).pathname + new URL(url).search });
      expect(res.statusCode, url).toBe(200);
      out.push(res.rawPayload);
    }
  }
  return out;
}

/** What exportSite and importBundle need of a test app. */
export const bundleDeps = (app: TestApp, config: Config) => ({
  db: app.database.db,
  storage: app.storage,
  secrets: loadSecretBox(config.secrets, config.dataDir).box,
  mediaPublicUrl: config.mediaPublicUrl,
});

const clients = new Map<string, Client>();
/** A client for a site an import made: a token of its owner, made once. */
export async function clientFor(app: TestApp, siteId: string): Promise<Client> {
  if (!clients.has(siteId)) {
    const owner = await ownerOf(app.database.db, siteId);
    const token = await createToken(app.database.db, { siteId, userId: owner!.id, scopes: 'all' });
    clients.set(siteId, client(app, token.token));
  }
  return clients.get(siteId)!;
}
