import { describe, expect, it } from 'vitest';
import { allScopesExcept, createTokenFor } from '../../../test/helpers/app.js';
import { type Client, client, expectErrorShape, expect422, ISO_TIMESTAMP } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';

const ctx = useTestApp();
const site = ctx.site;

const ISO = ISO_TIMESTAMP;

async function block(api: Client, body: Record<string, unknown> = {}) {
  const res = await api.post('/v1/site-blocks', { name: 'Header', type: 'global', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function outbox(siteId: string) {
  const rows = await ctx.app.database.db.selectFrom('outbox_events').select(['type', 'payload']).where('site_id', '=', siteId).orderBy('id').execute();
  return rows.map((r) => ({ type: r.type, data: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
}

async function deliveryClient(api: { siteId: string }) {
  return client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { kind: 'delivery', scopes: ['site_blocks.view'] })).token);
}

async function withScopes(api: { siteId: string }, scopes: string[]) {
  return client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { scopes })).token);
}

const publicKeyOf = async (api: Client) => (await api.get('/v1/site/info')).body.data.publicKey as string;

/** A field schema `levels` deep: each level one object field holding the next. */
function nested(levels: number): unknown[] {
  let fields: unknown[] = [{ name: 'leaf', type: 'string' }];
  for (let i = levels - 1; i >= 1; i--) fields = [{ name: `level${i}`, type: 'object', fields }];
  return fields;
}

const HERO_SCHEMA = [
  { name: 'title', type: 'string', required: true, maxLength: 40 },
  {
    name: 'hero',
    type: 'object',
    fields: [
      { name: 'title', type: 'string', required: true },
      { name: 'subtitle', type: 'string' },
    ],
  },
  {
    name: 'links',
    type: 'array',
    items: {
      type: 'object',
      fields: [
        { name: 'label', type: 'string' },
        { name: 'url', type: 'url' },
      ],
    },
  },
  { name: 'color', type: 'color' },
];

describe('POST /v1/site-blocks', () => {
  it('creates a global draft with data {} and a slug from the name; GET answers the same', async () => {
    const api = await site();
    const res = await api.post('/v1/site-blocks', { name: 'Main Header', type: 'global', schema: [{ name: 'logo', type: 'image' }], unknown: 1 });
    expect(res.status).toBe(201);
    const expected = {
      id: expect.any(Number),
      name: 'Main Header',
      slug: 'main-header',
      type: 'global',
      status: 'draft',
      path: null,
      locale: 'en',
      translationGroup: expect.stringMatching(/^[0-9a-f-]{36}$/),
      schema: [{ name: 'logo', type: 'image' }],
      data: {},
      hasUnpublishedChanges: false,
      publishedAt: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    };
    expect(res.body).toEqual({ data: expected });
    const got = await api.get('/v1/site-blocks/main-header');
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(got.headers.etag).toMatch(/^"[\w-]{27}"$/);
    expect(got.headers['cache-control']).toBe('private, no-cache');
    expect((await api.get('/v1/site-blocks/main-header', { 'if-none-match': String(got.headers.etag) })).status).toBe(304);
  });

  it('creates a page with its path (trailing slash dropped), unique per locale', async () => {
    const api = await site(['en', 'de']);
    const page = await block(api, { name: 'About', type: 'page', path: '/company/about/' });
    expect(page).toMatchObject({ type: 'page', path: '/company/about', slug: 'about' });
    expect422(await api.post('/v1/site-blocks', { name: 'Other', type: 'page', path: '/company/about' }), 'PATH_TAKEN', ['path']);
    expect((await api.post('/v1/site-blocks', { name: 'Über', type: 'page', path: '/company/about', locale: 'de' })).status).toBe(201);
    expect((await api.post('/v1/site-blocks', { name: 'Home', type: 'page', path: '/' })).body.data.path).toBe('/');
  });

  it('refuses a page without a path, a global block with one, and malformed paths', async () => {
    const api = await site();
    expect422(await api.post('/v1/site-blocks', { name: 'P', type: 'page' }), 'VALIDATION_FAILED', ['path']);
    expect422(await api.post('/v1/site-blocks', { name: 'P', type: 'page', path: null }), 'VALIDATION_FAILED', ['path']);
    expect422(await api.post('/v1/site-blocks', { name: 'G', type: 'global', path: '/x' }), 'VALIDATION_FAILED', ['path']);
    for (const path of ['about', '//evil.com', '/a?b=1', '/a#top', '/a b', '/a/../b', '/a//b', '/./a', '/a\u0001', '/a\tb']) {
      expect422(await api.post('/v1/site-blocks', { name: 'P', type: 'page', path }), 'PATH_INVALID', ['path']);
    }
    expect422(await api.post('/v1/site-blocks', { name: 'P', type: 'page', path: `/${'a'.repeat(500)}` }), 'VALIDATION_FAILED', ['path']);
    expect422(await api.post('/v1/site-blocks', { name: 'P', type: 'other' }), 'VALIDATION_FAILED', ['type']);
    expect422(await api.post('/v1/site-blocks', { type: 'global' }), 'VALIDATION_FAILED', ['name']);
    expect422(await api.post('/v1/site-blocks', { name: '   ', type: 'global' }), 'VALIDATION_FAILED', ['name']);
    expect422(await api.post('/v1/site-blocks', { name: 'x'.repeat(256), type: 'global' }), 'VALIDATION_FAILED', ['name']);
    expect((await api.get('/v1/site-blocks')).body.meta.total).toBe(0);
  });

  it('suffixes generated slugs, refuses a taken or reserved explicit slug, and never takes a reserved one', async () => {
    const api = await site();
    expect((await block(api, { name: 'Footer' })).slug).toBe('footer');
    expect((await block(api, { name: 'Footer' })).slug).toBe('footer-2');
    expect422(await api.post('/v1/site-blocks', { name: 'F', type: 'global', slug: 'footer' }), 'SLUG_TAKEN', ['slug']);
    expect422(await api.post('/v1/site-blocks', { name: 'F', type: 'global', slug: 'Not A Slug' }), 'VALIDATION_FAILED', ['slug']);
    for (const slug of ['settings', 'by-path']) expect422(await api.post('/v1/site-blocks', { name: 'F', type: 'global', slug }), 'SLUG_TAKEN', ['slug']);
    expect((await block(api, { name: 'Settings' })).slug).toBe('settings-2');
    expect((await block(api, { name: 'By path' })).slug).toBe('by-path-2');
    expect((await block(api, { name: '!!!' })).slug).toBe('block');
  });

  it('takes the locale (enabled only) and joins a translation group', async () => {
    const api = await site(['en', 'de']);
    const en = await block(api);
    const de = await block(api, { locale: 'DE', translationGroup: en.translationGroup });
    expect(de).toMatchObject({ locale: 'de', slug: 'header', translationGroup: en.translationGroup });
    expect((await api.post('/v1/site-blocks', { name: 'H', type: 'global', locale: 'de', translationGroup: en.translationGroup })).status).toBe(409);
    expect422(await api.post('/v1/site-blocks', { name: 'H', type: 'global', locale: 'fr' }), 'LOCALE_NOT_ENABLED', ['locale']);
    expect((await api.get('/v1/site-blocks/header?locale=de')).body.data.id).toBe(de.id);
    expect((await api.get('/v1/site-blocks/header')).body.data.id).toBe(en.id);
    expect((await api.get('/v1/site-blocks/header?locale=fr')).status).toBe(404);
  });
});

describe('PUT /v1/site-blocks/:slug (name, type, path)', () => {
  it('renames, moves a page to a free path, and turns a page into a global block and back', async () => {
    const api = await site();
    await block(api, { name: 'Taken', type: 'page', path: '/taken' });
    const page = await block(api, { name: 'About', type: 'page', path: '/about' });
    const renamed = await api.put('/v1/site-blocks/about', { name: 'About us', path: '/about-us/' });
    expect(renamed.body.data).toMatchObject({ id: page.id, name: 'About us', slug: 'about', path: '/about-us' });
    expect422(await api.put('/v1/site-blocks/about', { path: '/taken' }), 'PATH_TAKEN', ['path']);
    expect422(await api.put('/v1/site-blocks/about', { slug: 'other' }), 'VALIDATION_FAILED', ['slug']);
    expect((await api.put('/v1/site-blocks/about', { slug: 'about', name: 'About' })).status).toBe(200);
    expect((await api.put('/v1/site-blocks/about', { type: 'global' })).body.data).toMatchObject({ type: 'global', path: null });
    expect422(await api.put('/v1/site-blocks/about', { type: 'page' }), 'VALIDATION_FAILED', ['path']);
    expect((await api.put('/v1/site-blocks/about', { type: 'page', path: '/back' })).body.data).toMatchObject({ type: 'page', path: '/back' });
    expect422(await api.put('/v1/site-blocks/about', {}), 'VALIDATION_FAILED', ['body']);
    expect((await api.put('/v1/site-blocks/nope', { name: 'x' })).status).toBe(404);
  });
});

describe('PUT /v1/site-blocks/:slug/schema', () => {
  it('accepts all 17 field types, keeps the data, and leaves fields dropped from the schema as unvalidated orphans', async () => {
    const api = await site();
    await block(api, {
      schema: [
        { name: 'title', type: 'string' },
        { name: 'count', type: 'number' },
      ],
    });
    expect((await api.put('/v1/site-blocks/header/data', { data: { title: 'Hi', count: 3 } })).status).toBe(200);
    const all = [
      { name: 'a', type: 'string' },
      { name: 'b', type: 'text' },
      { name: 'c', type: 'richtext' },
      { name: 'd', type: 'number' },
      { name: 'e', type: 'boolean' },
      { name: 'f', type: 'select', options: ['x', 'y'] },
      { name: 'g', type: 'multiselect', options: [{ value: 'x' }] },
      { name: 'h', type: 'image' },
      { name: 'i', type: 'file' },
      { name: 'j', type: 'url' },
      { name: 'k', type: 'email' },
      { name: 'l', type: 'date' },
      { name: 'm', type: 'datetime' },
      { name: 'n', type: 'color' },
      { name: 'o', type: 'object', fields: [{ name: 'p', type: 'string' }] },
      { name: 'q', type: 'array', items: { type: 'object', fields: [{ name: 'r', type: 'number' }] } },
      { name: 's', type: 'dataSource', source: 'contents', limit: 3 },
    ];
    const res = await api.put('/v1/site-blocks/header/schema', { schema: all });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.schema).toHaveLength(17);
    expect(res.body.data.schema[5].options).toEqual([{ value: 'x' }, { value: 'y' }]);
    expect(res.body.data.data).toEqual({ title: 'Hi', count: 3, s: [] });
    // Orphans: readable, not validated (count is no longer a number field; a string passes).
    const put = await api.put('/v1/site-blocks/header/data', { data: { count: 'three', d: 4 } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.data.data).toMatchObject({ title: 'Hi', count: 'three', d: 4 });
    expect({ fields: all }).toBeTruthy();
    expect((await api.put('/v1/site-blocks/header/schema', { schema: { fields: all.slice(0, 2) } })).body.data.schema).toHaveLength(2);
  });

  it('limits each level to 250 fields and nesting to 5 levels', async () => {
    const api = await site();
    await block(api);
    const fields = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, type: 'string' }));
    expect((await api.put('/v1/site-blocks/header/schema', { schema: fields(250) })).status).toBe(200);
    expect422(await api.put('/v1/site-blocks/header/schema', { schema: fields(251) }), 'SCHEMA_INVALID', ['schema']);
    const inner = [{ name: 'o', type: 'object', fields: fields(251) }];
    expect422(await api.put('/v1/site-blocks/header/schema', { schema: inner }), 'SCHEMA_INVALID', ['schema[0].fields']);
    expect((await api.put('/v1/site-blocks/header/schema', { schema: nested(5) })).status).toBe(200);
    const six = await api.put('/v1/site-blocks/header/schema', { schema: nested(6) });
    expect(six.status).toBe(422);
    expect(Object.keys(six.body.errors)).toEqual(['schema[0].fields[0].fields[0].fields[0].fields[0].fields']);
    // The failed writes changed nothing.
    expect((await api.get('/v1/site-blocks/header')).body.data.schema).toEqual(nested(5));
  });

  it('checks dataSource fields: known source, its list filters, limit 1-100, at most 10, not in arrays', async () => {
    const api = await site();
    await block(api);
    const ds = (extra: Record<string, unknown>) => ({ schema: [{ name: 'latest', type: 'dataSource', label: 'Latest', source: 'contents', ...extra }] });
    const ok = await api.put(
      '/v1/site-blocks/header/schema',
      ds({ filters: { type: 'post', categoryIds: ['3'], sortBy: 'published_at', bogus: 1 }, limit: 100 }),
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    // Filters are stored as the list reads them: "3" is 3, unknown filters dropped.
    expect(ok.body.data.schema[0].filters).toEqual({ type: 'post', categoryIds: [3], sortBy: 'published_at' });
    expect422(await api.put('/v1/site-blocks/header/schema', ds({ filters: { status: 'nope' } })), 'SCHEMA_INVALID', ['schema[0].filters.status']);
    expect422(await api.put('/v1/site-blocks/header/schema', ds({ filters: { sortBy: 'password' } })), 'SCHEMA_INVALID', ['schema[0].filters.sortBy']);
    expect422(await api.put('/v1/site-blocks/header/schema', ds({ limit: 101 })), 'SCHEMA_INVALID', ['schema[0].limit']);
    expect422(await api.put('/v1/site-blocks/header/schema', ds({ limit: 0 })), 'SCHEMA_INVALID', ['schema[0].limit']);
    expect422(await api.put('/v1/site-blocks/header/schema', ds({ source: 'reviews' })), 'SCHEMA_INVALID', ['schema[0].source']);
    expect((await api.put('/v1/site-blocks/header/schema', ds({ source: 'forms', filters: { status: 'active' } }))).status).toBe(200);
    expect422(await api.put('/v1/site-blocks/header/schema', ds({ filters: 'type=post' })), 'SCHEMA_INVALID', ['schema[0].filters']);
    const many = Array.from({ length: 11 }, (_, i) => ({ name: `d${i}`, type: 'dataSource', source: 'tags' }));
    expect422(await api.put('/v1/site-blocks/header/schema', { schema: many }), 'SCHEMA_INVALID', ['schema[10]']);
    const inArray = [{ name: 'a', type: 'array', items: { type: 'object', fields: [{ name: 'd', type: 'dataSource', source: 'tags' }] } }];
    expect422(await api.put('/v1/site-blocks/header/schema', { schema: inArray }), 'SCHEMA_INVALID', ['schema[0].items.fields[0].type']);
  });

  it('needs site_blocks.schema (403), and update alone does not grant it', async () => {
    const api = await site();
    await block(api);
    const editor = await withScopes(api, allScopesExcept('site_blocks.schema'));
    const res = await editor.put('/v1/site-blocks/header/schema', { schema: [] });
    expect(res.status).toBe(403);
    expectErrorShape(res.body, 403, 'MISSING_SCOPE');
    expect((await editor.put('/v1/site-blocks/header/data', { data: { a: 1 } })).status).toBe(200);
  });
});

describe('PUT /v1/site-blocks/:slug/data and revisions', () => {
  it('merges only the sent fields, validates the result with field paths, refuses dataSource values', async () => {
    const api = await site();
    await block(api, { schema: [...HERO_SCHEMA, { name: 'latest', type: 'dataSource', source: 'contents' }] });
    const first = await api.put('/v1/site-blocks/header/data', { data: { title: 'Welcome', hero: { title: 'Big', subtitle: 'Small' } } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const second = await api.put('/v1/site-blocks/header/data', { data: { hero: { subtitle: 'Smaller' }, color: '#fff' } });
    expect(second.body.data.data).toEqual({ title: 'Welcome', hero: { title: 'Big', subtitle: 'Smaller' }, color: '#fff', latest: [] });
    expect422(await api.put('/v1/site-blocks/header/data', { data: { hero: { title: 5 } } }), 'DATA_INVALID', ['data.hero.title']);
    expect422(await api.put('/v1/site-blocks/header/data', { data: { hero: { title: null } } }), 'DATA_INVALID', ['data.hero.title']);
    expect422(await api.put('/v1/site-blocks/header/data', { data: { title: 'x'.repeat(41), links: [{ url: 'nope' }] } }), 'DATA_INVALID', [
      'data.title',
      'data.links[0].url',
    ]);
    expect422(await api.put('/v1/site-blocks/header/data', { data: { latest: [] } }), 'DATA_INVALID', ['data.latest']);
    expect422(await api.put('/v1/site-blocks/header/data', { data: [] }), 'VALIDATION_FAILED', ['data']);
    expect422(await api.put('/v1/site-blocks/header/data', {}), 'VALIDATION_FAILED', ['data']);
    // A prototype key is refused with the body (and never assigned by the merge).
    const proto = await api.call('PUT', '/v1/site-blocks/header/data', '{"data":{"__proto__":{"polluted":true},"color":"#000"}}', {
      'content-type': 'application/json',
    });
    expect(proto.status).toBe(400);
    expect(({} as any).polluted).toBeUndefined();
    // The failed PUTs changed nothing: two revisions.
    const revisions = await api.get('/v1/site-blocks/header/revisions');
    expect(revisions.body.meta.total).toBe(2);
    expect((await api.get('/v1/site-blocks/header')).body.data.data.color).toBe('#fff');
  });

  it('round trip: three changes, restore the first, data equals the first state, four revisions with the right changes', async () => {
    const api = await site();
    const b = await block(api, { schema: HERO_SCHEMA });
    await api.put('/v1/site-blocks/header/data', { data: { title: 'One', hero: { title: 'H1' } } });
    const state1 = (await api.get('/v1/site-blocks/header')).body.data.data;
    await api.put('/v1/site-blocks/header/data', { data: { title: 'Two' } });
    await api.put('/v1/site-blocks/header/data', { data: { hero: { title: 'H3', subtitle: 'S3' }, links: [{ label: 'A', url: '/a' }] } });
    expect((await api.post('/v1/site-blocks/header/publish')).status).toBe(200);
    // The same data again is no change: no revision.
    await api.put('/v1/site-blocks/header/data', { data: { title: 'Two' } });

    const list = await api.get('/v1/site-blocks/header/revisions');
    expect(list.body.meta.total).toBe(3);
    const [third, second, first] = list.body.data;
    expect(first).toEqual({
      id: expect.any(Number),
      siteBlockId: b.id,
      action: 'update',
      changes: [
        { field: 'hero', from: null, to: { title: 'H1' } },
        { field: 'title', from: null, to: 'One' },
      ],
      author: { id: api.userId, fullName: expect.any(String) },
      createdAt: expect.stringMatching(ISO),
    });
    expect(second.changes).toEqual([{ field: 'title', from: 'One', to: 'Two' }]);
    expect(third.changes).toEqual([
      { field: 'hero.subtitle', from: null, to: 'S3' },
      { field: 'hero.title', from: 'H1', to: 'H3' },
      { field: 'links', from: null, to: [{ label: 'A', url: '/a' }] },
    ]);

    const restored = await api.post(`/v1/site-blocks/header/revisions/${first.id}/restore`);
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(restored.body.data.data).toEqual(state1);
    expect(restored.body.data.status).toBe('published');
    const after = await api.get('/v1/site-blocks/header/revisions');
    expect(after.body.meta.total).toBe(4);
    expect(after.body.data[0]).toMatchObject({ action: 'restore' });
    // Sorted by field, the same on both databases (PostgreSQL's jsonb keeps keys in its own order).
    expect(after.body.data[0].changes).toEqual([
      { field: 'hero.subtitle', from: 'S3', to: null },
      { field: 'hero.title', from: 'H3', to: 'H1' },
      { field: 'links', from: [{ label: 'A', url: '/a' }], to: null },
      { field: 'title', from: 'Two', to: 'One' },
    ]);
    expect((await api.get('/v1/site-blocks/header/revisions?limit=2&page=2')).body.data.map((r: any) => r.id)).toEqual([second.id, first.id]);
  });

  it('a restore is refused when the data no longer fits the schema, and a revision of another block is 404', async () => {
    const api = await site();
    await block(api, { schema: [{ name: 'title', type: 'string' }] });
    await block(api, { name: 'Footer', schema: [{ name: 'title', type: 'string' }] });
    await api.put('/v1/site-blocks/header/data', { data: { title: 'One' } });
    await api.put('/v1/site-blocks/footer/data', { data: { title: 'Foot' } });
    const [rev] = (await api.get('/v1/site-blocks/header/revisions')).body.data;
    const [footerRev] = (await api.get('/v1/site-blocks/footer/revisions')).body.data;
    const notFound = await api.post(`/v1/site-blocks/header/revisions/${footerRev.id}/restore`);
    expect(notFound.status).toBe(404);
    expectErrorShape(notFound.body, 404, 'REVISION_NOT_FOUND');
    await api.put('/v1/site-blocks/header/data', { data: { title: 'Two' } });
    await api.put('/v1/site-blocks/header/schema', { schema: [{ name: 'title', type: 'string', maxLength: 2 }] });
    expect422(await api.post(`/v1/site-blocks/header/revisions/${rev.id}/restore`), 'DATA_INVALID', ['data.title']);
    expect((await api.get('/v1/site-blocks/header')).body.data.data).toEqual({ title: 'Two' });
  });

  it('concurrent edits of different fields all land, each with its revision (no lost update)', async () => {
    const api = await site();
    await block(api);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => api.put('/v1/site-blocks/header/data', { data: { [`f${i}`]: i } })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const data = (await api.get('/v1/site-blocks/header')).body.data.data;
    expect(Object.keys(data).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `f${i}`).sort());
    const revisions = (await api.get('/v1/site-blocks/header/revisions?limit=100')).body;
    expect(revisions.meta.total).toBe(20);
    expect(revisions.data.every((r: any) => r.changes.length === 1)).toBe(true);
  });

  it('delete removes the block and its revisions', async () => {
    const api = await site();
    const b = await block(api);
    await api.put('/v1/site-blocks/header/data', { data: { a: 1 } });
    expect((await api.delete('/v1/site-blocks/header')).body).toEqual({ message: 'Site block deleted.' });
    expect((await api.get('/v1/site-blocks/header')).status).toBe(404);
    expect((await api.delete('/v1/site-blocks/header')).status).toBe(404);
    const left = await ctx.app.database.db.selectFrom('site_block_revisions').select('id').where('site_block_id', '=', b.id).execute();
    expect(left).toEqual([]);
  });
});

describe('publishing and delivery', () => {
  it('publish and unpublish change what delivery tokens and the public read see, with events', async () => {
    const api = await site();
    await block(api, { name: 'About', type: 'page', path: '/about', schema: [{ name: 'title', type: 'string' }] });
    await api.put('/v1/site-blocks/about/data', { data: { title: 'Hello' } });
    const front = await deliveryClient(api);
    const anon = client(ctx.app);
    const key = await publicKeyOf(api);
    expect((await front.get('/v1/site-blocks/about')).status).toBe(404);
    expect((await front.get('/v1/site-blocks/by-path?path=/about')).status).toBe(404);
    expect((await anon.get(`/v1/public/site-blocks/about?siteKey=${key}`)).status).toBe(404);
    expect((await front.get('/v1/site-blocks')).body.meta.total).toBe(0);

    const published = await api.post('/v1/site-blocks/about/publish');
    expect(published.body.data).toMatchObject({ status: 'published', publishedAt: expect.stringMatching(ISO) });
    expect((await front.get('/v1/site-blocks/about')).body.data.data).toEqual({ title: 'Hello' });
    expect((await front.get('/v1/site-blocks/by-path?path=/about/')).body.data.slug).toBe('about');
    expect((await front.get('/v1/site-blocks?status=draft')).body.meta.total).toBe(0);
    expect((await front.get('/v1/site-blocks')).body.data.map((b: any) => b.slug)).toEqual(['about']);
    const pub = await anon.get(`/v1/public/site-blocks?path=/about&siteKey=${key}`);
    expect(pub.status).toBe(200);
    expect(pub.body.data).toMatchObject({ slug: 'about', data: { title: 'Hello' } });
    expect(pub.headers['cache-control']).toBe('public, max-age=60');
    expect((await anon.get(`/v1/public/site-blocks?path=/about`, { 'x-site-key': key, 'if-none-match': String(pub.headers.etag) })).status).toBe(304);
    expect((await anon.get(`/v1/public/site-blocks/about`, { 'x-site-key': key })).body).toEqual(pub.body);
    expect((await anon.get('/v1/public/site-blocks/about')).status).toBe(401);
    // Edits are live at once by the spec (no staged publishing): the ETag changes.
    await api.put('/v1/site-blocks/about/data', { data: { title: 'Changed' } });
    const changed = await anon.get(`/v1/public/site-blocks/about?siteKey=${key}`, { 'if-none-match': String(pub.headers.etag) });
    expect(changed.status).toBe(200);
    expect(changed.body.data.data).toEqual({ title: 'Changed' });
    // Publishing again with nothing new sends no second event.
    await api.post('/v1/site-blocks/about/publish');

    expect((await api.post('/v1/site-blocks/about/unpublish')).body.data.status).toBe('draft');
    expect((await front.get('/v1/site-blocks/about')).status).toBe(404);
    expect((await anon.get(`/v1/public/site-blocks/about?siteKey=${key}`)).status).toBe(404);
    await api.post('/v1/site-blocks/about/unpublish');
    const events = await outbox(api.siteId);
    expect(events.map((e) => e.type)).toEqual(['site_block.published', 'site_block.unpublished']);
    expect(events[0]!.data).toMatchObject({ slug: 'about', type: 'page', path: '/about', status: 'published', locale: 'en' });
    expect(events[1]!.data).toMatchObject({ slug: 'about', status: 'draft' });
  });

  it('reads a page by the path a front end routes, with or without the locale prefix', async () => {
    const api = await site(['en', 'de']);
    const en = await block(api, { name: 'About', type: 'page', path: '/about' });
    const de = await block(api, { name: 'Über uns', type: 'page', path: '/about', locale: 'de', translationGroup: en.translationGroup });
    const dePage = await block(api, { name: 'De', type: 'page', path: '/de' });
    for (const slug of ['about', 'uber-uns', 'de']) {
      await api.post(`/v1/site-blocks/${slug}/publish${slug === 'uber-uns' ? '?locale=de' : ''}`);
    }
    const key = await publicKeyOf(api);
    const anon = client(ctx.app);
    const get = async (q: string) => (await anon.get(`/v1/public/site-blocks?siteKey=${key}&${q}`)).body.data?.id;
    expect(await get('path=/about')).toBe(en.id);
    expect(await get('path=/de/about')).toBe(de.id);
    expect(await get('path=/DE/about')).toBe(de.id);
    expect(await get('path=/about&locale=de')).toBe(de.id);
    // A path whose first segment is a locale but has no page there falls back to the default locale.
    expect(await get('path=/de')).toBe(dePage.id);
    expect((await anon.get(`/v1/public/site-blocks?siteKey=${key}&path=/nowhere`)).status).toBe(404);
    expect422(await anon.get(`/v1/public/site-blocks?siteKey=${key}&path=nowhere`), 'PATH_INVALID', ['path']);
    expect422(await anon.get(`/v1/public/site-blocks?siteKey=${key}`), 'VALIDATION_FAILED', ['path']);
  });

  it('a delivery token reads only, and never revisions, translations or settings', async () => {
    const api = await site();
    await block(api);
    await api.post('/v1/site-blocks/header/publish');
    const front = await deliveryClient(api);
    expect((await front.get('/v1/site-blocks/header')).status).toBe(200);
    for (const url of ['/v1/site-blocks/header/revisions', '/v1/site-blocks/header/translations', '/v1/site-blocks/settings']) {
      const res = await front.get(url);
      expect(res.status, url).toBe(403);
      expectErrorShape(res.body, 403, 'MISSING_SCOPE');
    }
    expect((await front.put('/v1/site-blocks/header/data', { data: { a: 1 } })).status).toBe(403);
  });

  it('guards each action with its scope (403)', async () => {
    const api = await site();
    await block(api);
    const cases: Array<[string, (c: Client) => Promise<{ status: number }>]> = [
      ['site_blocks.view', (c) => c.get('/v1/site-blocks')],
      ['site_blocks.create', (c) => c.post('/v1/site-blocks', { name: 'X', type: 'global' })],
      ['site_blocks.update', (c) => c.put('/v1/site-blocks/header/data', { data: { a: 1 } })],
      ['site_blocks.delete', (c) => c.delete('/v1/site-blocks/header')],
      ['site_blocks.publish', (c) => c.post('/v1/site-blocks/header/publish')],
      ['site_blocks.publish', (c) => c.post('/v1/site-blocks/header/unpublish')],
      ['site_blocks.publish', (c) => c.put('/v1/site-blocks/settings', { stagedPublishing: true })],
      ['site_blocks.schema', (c) => c.put('/v1/site-blocks/header/schema', { schema: [] })],
    ];
    for (const [scope, call] of cases) {
      const res = await call(await withScopes(api, allScopesExcept(scope)));
      expect(res.status, scope).toBe(403);
    }
    expect((await api.get('/v1/site-blocks/header')).body.data.status).toBe('draft');
  });

  it('staged publishing (opt-in): a published block serves its snapshot until published again', async () => {
    const api = await site();
    await block(api, { schema: [{ name: 'title', type: 'string' }] });
    expect((await api.get('/v1/site-blocks/settings')).body).toEqual({ data: { stagedPublishing: false } });
    expect((await api.put('/v1/site-blocks/settings', { stagedPublishing: true })).body).toEqual({ data: { stagedPublishing: true } });
    await api.put('/v1/site-blocks/header/data', { data: { title: 'Live' } });
    // A draft has nothing published: edits never count as unpublished changes.
    expect((await api.get('/v1/site-blocks/header')).body.data.hasUnpublishedChanges).toBe(false);
    await api.post('/v1/site-blocks/header/publish');
    const front = await deliveryClient(api);
    const edited = await api.put('/v1/site-blocks/header/data', { data: { title: 'Staged' } });
    expect(edited.body.data).toMatchObject({ data: { title: 'Staged' }, hasUnpublishedChanges: true });
    await api.put('/v1/site-blocks/header/schema', {
      schema: [
        { name: 'title', type: 'string' },
        { name: 'extra', type: 'number' },
      ],
    });
    await api.put('/v1/site-blocks/header/data', { data: { title: 'Staged again' } });
    const seen = (await front.get('/v1/site-blocks/header')).body.data;
    expect(seen).toMatchObject({ data: { title: 'Live' }, schema: [{ name: 'title', type: 'string' }], hasUnpublishedChanges: false });
    const republished = await api.post('/v1/site-blocks/header/publish');
    expect(republished.body.data.hasUnpublishedChanges).toBe(false);
    expect((await front.get('/v1/site-blocks/header')).body.data.data).toEqual({ title: 'Staged again' });
    // Turning it off makes working copies live at once.
    await api.put('/v1/site-blocks/header/data', { data: { title: 'Working' } });
    expect((await front.get('/v1/site-blocks/header')).body.data.data).toEqual({ title: 'Staged again' });
    await api.put('/v1/site-blocks/settings', { stagedPublishing: false });
    expect((await front.get('/v1/site-blocks/header')).body.data.data).toEqual({ title: 'Working' });
    expect((await api.get('/v1/site-blocks/header')).body.data.hasUnpublishedChanges).toBe(false);
    expect((await outbox(api.siteId)).map((e) => e.type)).toEqual(['site_block.published', 'site_block.published']);
    expect422(await api.put('/v1/site-blocks/settings', { stagedPublishing: 'yes' }), 'VALIDATION_FAILED', ['stagedPublishing']);
  });
});

describe('data sources', () => {
  async function fill(api: Client) {
    const cat = (await api.post('/v1/categories', { name: 'News' })).body.data;
    for (let i = 1; i <= 12; i++) {
      const res = await api.post('/v1/contents', {
        type: 'post',
        title: `Post ${i}`,
        status: i <= 10 ? 'published' : 'draft',
        categoryIds: i <= 4 ? [cat.id] : [],
        bodyMarkdown: 'Text',
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    await api.post('/v1/tags', { name: 'Red' });
    await api.post('/v1/tags', { name: 'Blue' });
    await api.post('/v1/variables', { key: 'phone', label: 'Phone', value: '555' });
    await api.post('/v1/forms', { name: 'Contact', status: 'active', schema: [{ name: 'email', type: 'email' }] });
    await api.post('/v1/forms', { name: 'Survey', status: 'draft', schema: [] });
    return cat;
  }

  it('resolve on read to what the group list answers, published only for delivery tokens and the public read', async () => {
    const api = await site();
    const cat = await fill(api);
    await block(api, { name: 'Home', type: 'page', path: '/' });
    await block(api, { name: 'Footer' });
    const schema = [
      { name: 'title', type: 'string' },
      { name: 'latest', type: 'dataSource', source: 'contents', limit: 20 },
      { name: 'news', type: 'dataSource', source: 'contents', filters: { categoryIds: [cat.id], sortBy: 'title', sortOrder: 'asc' }, limit: 3 },
      { name: 'sections', type: 'object', fields: [{ name: 'tags', type: 'dataSource', source: 'tags', filters: { search: 'red' } }] },
      { name: 'vars', type: 'dataSource', source: 'variables' },
      { name: 'cats', type: 'dataSource', source: 'categories' },
      { name: 'blocks', type: 'dataSource', source: 'siteBlocks', filters: { type: 'global' } },
      { name: 'forms', type: 'dataSource', source: 'forms' },
    ];
    expect((await api.put('/v1/site-blocks/home/schema', { schema })).status).toBe(200);
    await api.put('/v1/site-blocks/home/data', { data: { title: 'Home', sections: { intro: 'kept' } } });
    await api.post('/v1/site-blocks/home/publish');

    const management = (await api.get('/v1/site-blocks/home')).body.data.data;
    const contentsList = (await api.get('/v1/contents?limit=20')).body.data;
    expect(management.latest).toEqual(contentsList);
    expect(management.latest).toHaveLength(12);
    expect(management.news.map((c: any) => c.title)).toEqual(['Post 1', 'Post 2', 'Post 3']);
    expect(management.sections).toEqual({ intro: 'kept', tags: [expect.objectContaining({ name: 'Red' })] });
    expect(management.vars).toEqual([expect.objectContaining({ key: 'phone', value: '555' })]);
    expect(management.cats).toEqual([expect.objectContaining({ id: cat.id, name: 'News' })]);
    expect(management.blocks).toEqual([expect.objectContaining({ slug: 'footer', status: 'draft' })]);
    expect(management.blocks[0].data).toBeUndefined();
    expect(management.forms.map((f: any) => `${f.slug}/${f.status}`)).toEqual(['survey/draft', 'contact/active']);
    expect(management.title).toBe('Home');

    const front = await deliveryClient(api);
    const delivered = (await front.get('/v1/site-blocks/by-path?path=/')).body.data.data;
    expect(delivered.latest).toHaveLength(10);
    expect(delivered.latest.every((c: any) => c.status === 'published')).toBe(true);
    expect(delivered.blocks).toEqual([]);
    expect(delivered.forms.map((f: any) => f.slug)).toEqual(['contact']);
    const key = await publicKeyOf(api);
    const pub = (await client(ctx.app).get(`/v1/public/site-blocks?path=/&siteKey=${key}`)).body.data.data;
    expect(pub).toEqual(delivered);
    // Stored data never holds the resolved records.
    const row = await ctx.app.database.db
      .selectFrom('site_blocks')
      .select('data')
      .where('slug', '=', 'home')
      .where('site_id', '=', api.siteId)
      .executeTakeFirstOrThrow();
    const stored = typeof row.data === 'string' ? JSON.parse(row.data) : row.data;
    expect(stored).toEqual({ title: 'Home', sections: { intro: 'kept' } });
  });

  it("never resolves another site's records", async () => {
    const api = await site();
    const other = await site();
    await fill(other);
    await block(api, {
      schema: [
        { name: 'latest', type: 'dataSource', source: 'contents' },
        { name: 'tags', type: 'dataSource', source: 'tags' },
      ],
    });
    expect((await api.get('/v1/site-blocks/header')).body.data.data).toEqual({ latest: [], tags: [] });
  });
});

describe('lists', () => {
  it('filter by type, status, path, locale, search and translation group; summaries carry no schema or data', async () => {
    const api = await site(['en', 'de']);
    const header = await block(api, { name: 'Header', schema: [{ name: 'a', type: 'string' }] });
    await block(api, { name: 'Pricing page', type: 'page', path: '/pricing' });
    await block(api, { name: 'Kopf', locale: 'de', translationGroup: header.translationGroup });
    await api.post('/v1/site-blocks/header/publish');
    const slugs = async (q: string) => (await api.get(`/v1/site-blocks?${q}`)).body.data.map((b: any) => `${b.slug}/${b.locale}`);
    expect(await slugs('')).toEqual(['kopf/de', 'pricing-page/en', 'header/en']);
    expect(await slugs('type=page')).toEqual(['pricing-page/en']);
    expect(await slugs('status=published')).toEqual(['header/en']);
    expect(await slugs('path=/pricing')).toEqual(['pricing-page/en']);
    expect(await slugs('locale=DE')).toEqual(['kopf/de']);
    expect(await slugs('search=PRIC')).toEqual(['pricing-page/en']);
    expect(await slugs(`translationGroup=${header.translationGroup}&sortBy=slug`)).toEqual(['header/en', 'kopf/de']);
    const list = await api.get('/v1/site-blocks?limit=1');
    expect(list.body.meta).toEqual({ total: 3, perPage: 1, currentPage: 1, lastPage: 3 });
    expect(list.body.data[0].schema).toBeUndefined();
    expect(list.body.data[0].data).toBeUndefined();
    expect422(await api.get('/v1/site-blocks?type=other'), 'VALIDATION_FAILED', ['type']);
    expect422(await api.get('/v1/site-blocks?sortBy=data'), 'VALIDATION_FAILED', ['sortBy']);
    expect422(await api.get('/v1/site-blocks?limit=101'), 'VALIDATION_FAILED', ['limit']);
  });
});

describe('translations', () => {
  it('status per enabled locale and copy-to-locale as a draft with the same schema and data', async () => {
    const api = await site(['en', 'de', 'fr']);
    await block(api, {
      name: 'About',
      type: 'page',
      path: '/about',
      schema: [
        { name: 'title', type: 'string' },
        { name: 'intro', type: 'text' },
      ],
    });
    await api.put('/v1/site-blocks/about/data', { data: { title: 'About', intro: 'Hi' } });
    await api.post('/v1/site-blocks/about/publish');
    expect((await api.get('/v1/site-blocks/about/translations')).body).toEqual({
      data: { en: { status: 'complete' }, de: { status: 'missing' }, fr: { status: 'missing' } },
    });
    const copy = await api.post('/v1/site-blocks/about/copy-to-locale', { locale: 'de' });
    expect(copy.status, JSON.stringify(copy.body)).toBe(200);
    expect(copy.body.data).toMatchObject({ slug: 'about', locale: 'de', status: 'draft', path: '/about', data: { title: 'About', intro: 'Hi' } });
    expect(copy.body.data.schema).toEqual([
      { name: 'title', type: 'string' },
      { name: 'intro', type: 'text' },
    ]);
    expect((await api.post('/v1/site-blocks/about/copy-to-locale', { targetLocale: 'de' })).status).toBe(409);
    expect422(await api.post('/v1/site-blocks/about/copy-to-locale', { locale: 'it' }), 'LOCALE_NOT_ENABLED', ['locale']);
    // de is a draft where en is published: partial; once published and filled, complete.
    expect((await api.get('/v1/site-blocks/about/translations')).body.data.de).toEqual({ status: 'partial' });
    await api.post('/v1/site-blocks/about/publish?locale=de');
    expect((await api.get('/v1/site-blocks/about/translations')).body.data.de).toEqual({ status: 'complete' });
    await api.put('/v1/site-blocks/about/data?locale=de', { data: { intro: '' } });
    expect((await api.get('/v1/site-blocks/about/translations')).body.data.de).toEqual({ status: 'partial' });
    // A target locale whose path is taken by another page: 422.
    await block(api, { name: 'Other', type: 'page', path: '/about', locale: 'fr' });
    expect422(await api.post('/v1/site-blocks/about/copy-to-locale', { locale: 'fr' }), 'PATH_TAKEN', ['path']);
  });
});

describe('page blocks in the SEO outputs (issue 13, decisions G18, S15)', () => {
  async function pages(api: Client) {
    await api.put('/v1/seo/settings', { llmsTxtEnabled: true });
    const schema = [
      { name: 'intro', type: 'text', label: 'Introduction' },
      { name: 'body', type: 'richtext' },
      {
        name: 'hero',
        type: 'object',
        label: 'Hero',
        fields: [
          { name: 'heading', type: 'string' },
          { name: 'image', type: 'image', label: 'Hero image' },
        ],
      },
      {
        name: 'features',
        type: 'array',
        label: 'Features',
        items: {
          type: 'object',
          fields: [
            { name: 'title', type: 'string' },
            { name: 'text', type: 'text' },
          ],
        },
      },
      { name: 'tags', type: 'array', items: { type: 'string' } },
      { name: 'cta', type: 'url', label: 'Sign up' },
      { name: 'dark', type: 'boolean' },
      { name: 'latest', type: 'dataSource', source: 'contents' },
    ];
    const about = await block(api, { name: 'About *us*', type: 'page', path: '/about', schema });
    await api.put('/v1/site-blocks/about-us/data', {
      data: {
        intro: 'We make [tea].\n\nSince 1999.',
        body: '## History\n\nA **long** one.',
        hero: { heading: 'Hello', image: { url: 'https://cdn.test/hero.jpg' } },
        features: [{ title: 'Fast', text: 'Very.' }, { title: 'Safe' }],
        tags: ['a', 'b'],
        cta: 'https://example.test/signup',
        dark: true,
      },
    });
    await api.post('/v1/site-blocks/about-us/publish');
    await block(api, { name: 'Über uns', type: 'page', path: '/about', locale: 'de', translationGroup: about.translationGroup });
    await api.post('/v1/site-blocks/uber-uns/publish?locale=de');
    await block(api, { name: 'Draft page', type: 'page', path: '/draft' });
    await block(api, { name: 'Footer' });
    await api.post('/v1/site-blocks/footer/publish');
  }

  it('lists published pages in sitemap.xml and sitemap.json with their locale prefix and alternates', async () => {
    const api = await site(['en', 'de']);
    await pages(api);
    const json = (await api.get('/v1/seo/sitemap.json')).body.data;
    const locs = json.map((u: any) => u.loc ?? u.url);
    // By path, then locale.
    expect(locs).toEqual(['https://example.test/de/about', 'https://example.test/about']);
    const xml = (await api.get('/v1/seo/sitemap.xml')).text;
    expect(xml).toContain(
      '<loc>https://example.test/about</loc>' +
        `<lastmod>${json[1].lastmod}</lastmod><changefreq>weekly</changefreq><priority>0.5</priority>` +
        '<xhtml:link rel="alternate" hreflang="de" href="https://example.test/de/about"/>' +
        '<xhtml:link rel="alternate" hreflang="en" href="https://example.test/about"/>' +
        '<xhtml:link rel="alternate" hreflang="x-default" href="https://example.test/about"/>',
    );
    expect(xml).not.toContain('/draft');
    const preview = (await api.get('/v1/sitemap/preview')).body.data;
    expect(preview.map((u: any) => u.source)).toEqual(['site-block', 'site-block']);
    // A path rule sets a page's priority; unpublishing removes it at once (the output cache follows).
    await api.post('/v1/sitemap/rules', { sourceType: 'path_pattern', sourceValue: '/de/*', priority: 0.9, changefreq: 'daily' });
    expect((await api.get('/v1/seo/sitemap.json')).body.data[0]).toMatchObject({ priority: 0.9, changefreq: 'daily' });
    await api.post('/v1/site-blocks/uber-uns/unpublish?locale=de');
    expect((await api.get('/v1/seo/sitemap.json')).body.data).toHaveLength(1);
  });

  it('renders a published page as markdown, lists pages in llms.txt and llms-full.txt, and the public twins', async () => {
    const api = await site(['en', 'de']);
    await pages(api);
    const md = await api.get('/v1/markdown/pages/about-us');
    expect(md.status).toBe(200);
    expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(md.text).toBe(
      `${[
        '# About \\*us\\*',
        'We make \\[tea\\].',
        'Since 1999.',
        '## History\n\nA **long** one.',
        '## Hero\n\nHello\n\n![Hero image](<https://cdn.test/hero.jpg>)',
        '## Features\n\nFast\n\nVery.\n\nSafe',
        '- a\n- b',
        '[Sign up](<https://example.test/signup>)',
      ].join('\n\n')}\n`,
    );
    expect((await api.get('/v1/markdown/pages/uber-uns?locale=de')).text).toBe('# Über uns\n\n');
    for (const slug of ['draft-page', 'footer', 'nope']) expect((await api.get(`/v1/markdown/pages/${slug}`)).status, slug).toBe(404);
    const llms = (await api.get('/v1/llms.txt')).text;
    expect(llms).toContain('## Pages\n\n- [Über uns](https://example.test/de/about)\n- [About *us*](https://example.test/about)\n\n');
    const full = (await api.get('/v1/llms-full.txt')).text;
    expect(full).toContain(`---\n\nURL: https://example.test/about\n\n${md.text}\n`);
    const key = await publicKeyOf(api);
    const pub = await client(ctx.app).get(`/v1/public/markdown/pages/about-us?siteKey=${key}`);
    expect(pub.text).toBe(md.text);
    expect((await client(ctx.app).get(`/v1/public/markdown/pages/about-us?siteKey=${key}`, { 'if-none-match': String(pub.headers.etag) })).status).toBe(304);
  });
});
