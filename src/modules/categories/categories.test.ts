import { describe, expect, it } from 'vitest';
import { createTokenFor } from '../../../test/helpers/app.js';
import { client, expectErrorShape, type Client } from '../../../test/helpers/http.js';
import { describeTranslations, useTestApp } from '../../../test/helpers/suite.js';

const ctx = useTestApp();
const site = ctx.site;

async function create(api: Client, body: Record<string, unknown>) {
  const res = await api.post('/v1/categories', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

const titleField = { name: 'title', type: 'string', label: 'Title', required: true };

describe('POST /v1/categories', () => {
  it('creates a category (201) with every field and defaults', async () => {
    const api = await site();
    const res = await api.post('/v1/categories', {
      name: 'Über uns',
      description: 'About',
      image: 'https://cdn.test/a.png',
      sitemapPriority: 0.8,
      sitemapChangefreq: 'weekly',
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      name: 'Über uns',
      slug: 'uber-uns',
      description: 'About',
      image: 'https://cdn.test/a.png',
      parentId: null,
      locale: 'en',
      translationGroup: expect.stringMatching(/^[0-9a-f-]{36}$/),
      contentCount: 0,
      sitemapPriority: 0.8,
      sitemapChangefreq: 'weekly',
      contentMode: 'standard',
      schema: null,
      schemaSource: 'own',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it('holds name and slug at 1-255, sitemapPriority at 0-1 and sitemapChangefreq to its enum', async () => {
    const api = await site();
    await create(api, { name: 'n'.repeat(255), slug: 's'.repeat(255), sitemapPriority: 0 });
    await create(api, { name: 'one', sitemapPriority: 1, sitemapChangefreq: null });
    for (const [body, field] of [
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x', slug: 's'.repeat(256) }, 'slug'],
      [{ name: 'x', sitemapPriority: 1.01 }, 'sitemapPriority'],
      [{ name: 'x', sitemapPriority: -0.1 }, 'sitemapPriority'],
      [{ name: 'x', sitemapChangefreq: 'sometimes' }, 'sitemapChangefreq'],
      [{ name: 'x', contentMode: 'fancy' }, 'contentMode'],
      [{ name: 'x', schemaSource: 'borrowed' }, 'schemaSource'],
    ] as const) {
      const res = await api.post('/v1/categories', body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(422);
      expectErrorShape(res.body, 422);
      expect(Object.keys(res.body.errors), JSON.stringify(body).slice(0, 60)).toContain(field);
    }
    expect((await api.get('/v1/categories')).body.meta.total).toBe(2);
  });

  it('generates -2, -3 slugs and refuses an explicit duplicate slug with 422 SLUG_TAKEN', async () => {
    const api = await site();
    await create(api, { name: 'Guides' });
    expect((await create(api, { name: 'Guides' })).slug).toBe('guides-2');
    const clash = await api.post('/v1/categories', { name: 'Other', slug: 'guides' });
    expect(clash.status).toBe(422);
    expectErrorShape(clash.body, 422, 'SLUG_TAKEN');
  });

  it('refuses a parent that does not exist, belongs to another site, or is in another locale (422 PARENT_INVALID)', async () => {
    const api = await site(['en', 'de']);
    const other = await site();
    const foreign = await create(other, { name: 'Foreign' });
    const de = await create(api, { name: 'Deutsch', locale: 'de' });
    for (const parentId of [999999, foreign.id, de.id]) {
      const res = await api.post('/v1/categories', { name: 'Child', parentId });
      expect(res.status).toBe(422);
      expectErrorShape(res.body, 422, 'PARENT_INVALID');
      expect(res.body.errors).toHaveProperty('parentId');
    }
  });
});

describe('structured categories and field schemas', () => {
  it('stores a valid schema and needs one for structured content', async () => {
    const api = await site();
    const cat = await create(api, { name: 'Recipes', contentMode: 'structured', schema: [titleField, { name: 'minutes', type: 'number' }] });
    expect(cat.contentMode).toBe('structured');
    expect(cat.schema).toEqual([titleField, { name: 'minutes', type: 'number' }]);
    const wrapped = await create(api, { name: 'Wrapped', schema: { fields: [titleField] } });
    expect(wrapped.schema).toEqual([titleField]);
    const missing = await api.post('/v1/categories', { name: 'No schema', contentMode: 'structured' });
    expect(missing.status).toBe(422);
    expectErrorShape(missing.body, 422, 'SCHEMA_INVALID');
    expect(missing.body.errors).toHaveProperty('schema');
  });

  it('refuses an invalid schema with the offending path', async () => {
    const api = await site();
    const res = await api.post('/v1/categories', { name: 'Bad', contentMode: 'structured', schema: [titleField, { name: 'x', type: 'hologram' }] });
    expect(res.status).toBe(422);
    expectErrorShape(res.body, 422, 'SCHEMA_INVALID');
    expect(Object.keys(res.body.errors)).toEqual(['schema[1].type']);
  });

  it('accepts 250 fields on one level and refuses 251; accepts 5 nesting levels and refuses 6', async () => {
    const api = await site();
    const flat = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, type: 'string' }));
    await create(api, { name: 'Wide', contentMode: 'structured', schema: flat(250) });
    const wide = await api.post('/v1/categories', { name: 'Too wide', contentMode: 'structured', schema: flat(251) });
    expect(wide.status).toBe(422);
    expect(Object.keys(wide.body.errors)).toEqual(['schema']);
    const nest = (levels: number): any =>
      levels === 1 ? { name: 'leaf', type: 'string' } : { name: `l${levels}`, type: 'object', fields: [nest(levels - 1)] };
    await create(api, { name: 'Deep', contentMode: 'structured', schema: [nest(5)] });
    const deep = await api.post('/v1/categories', { name: 'Too deep', contentMode: 'structured', schema: [nest(6)] });
    expect(deep.status).toBe(422);
    expectErrorShape(deep.body, 422, 'SCHEMA_INVALID');
    expect(Object.keys(deep.body.errors)[0]).toMatch(/^schema\[0\]\.fields\[0\]/);
  });

  it("inherits the nearest ancestor's schema with schemaSource inherit, and refuses inherit without one", async () => {
    const api = await site();
    const root = await create(api, { name: 'Root', contentMode: 'structured', schema: [titleField] });
    const mid = await create(api, { name: 'Mid', parentId: root.id, schemaSource: 'inherit' });
    const leaf = await create(api, { name: 'Leaf', parentId: mid.id, contentMode: 'structured', schemaSource: 'inherit' });
    const detail = await api.get(`/v1/categories/${leaf.id}`);
    expect(detail.body.schema).toBeNull();
    expect(detail.body.effectiveSchema).toEqual([titleField]);
    const orphan = await api.post('/v1/categories', { name: 'Orphan', contentMode: 'structured', schemaSource: 'inherit' });
    expect(orphan.status).toBe(422);
    expect(orphan.body.errors).toHaveProperty('schemaSource');
  });
});

describe('GET /v1/categories', () => {
  async function tree(api: Client) {
    const news = await create(api, { name: 'News', description: 'Daily news' });
    const sport = await create(api, { name: 'Sport', parentId: news.id });
    const football = await create(api, { name: 'Football', parentId: sport.id });
    const tech = await create(api, { name: 'Tech' });
    return { news, sport, football, tech };
  }
  const names = async (api: Client, q: string) => (await api.get(`/v1/categories?sortBy=name&sortOrder=asc&${q}`)).body.data.map((c: any) => c.name);

  it('filters by parentId, parentId=null, isRoot and includeChildren', async () => {
    const api = await site();
    const { news } = await tree(api);
    expect(await names(api, `parentId=${news.id}`)).toEqual(['Sport']);
    expect(await names(api, `parentId=${news.id}&includeChildren=true`)).toEqual(['Football', 'Sport']);
    expect(await names(api, 'parentId=null')).toEqual(['News', 'Tech']);
    expect(await names(api, 'isRoot=true')).toEqual(['News', 'Tech']);
    expect(await names(api, 'isRoot=false')).toEqual(['Football', 'Sport']);
    expect((await api.get('/v1/categories?parentId=abc')).status).toBe(422);
  });

  it('filters by search, slug, slugs[], ids[], excludeIds[] and dates, and paginates', async () => {
    const api = await site();
    const { news, tech, sport } = await tree(api);
    expect(await names(api, 'search=daily')).toEqual(['News']);
    expect(await names(api, 'slug=tech')).toEqual(['Tech']);
    expect(await names(api, 'slugs[]=tech&slugs[]=sport')).toEqual(['Sport', 'Tech']);
    expect(await names(api, `ids[]=${news.id}&ids[]=${tech.id}`)).toEqual(['News', 'Tech']);
    expect(await names(api, `excludeIds[]=${news.id}&excludeIds[]=${sport.id}`)).toEqual(['Football', 'Tech']);
    expect(await names(api, 'dateTo=2001-01-01')).toEqual([]);
    const page = await api.get('/v1/categories?limit=3&page=2&sortBy=name&sortOrder=asc');
    expect(page.body.meta).toEqual({ total: 4, perPage: 3, currentPage: 2, lastPage: 2 });
    expect(page.body.data.map((c: any) => c.name)).toEqual(['Tech']);
    expect((await api.get('/v1/categories?sortBy=contentCount')).status).toBe(422);
    expect((await api.get('/v1/categories?limit=101')).status).toBe(422);
  });
});

describe('GET /v1/categories/tree and /v1/categories/:id', () => {
  it('nests the tree with contentCount on every node', async () => {
    const api = await site();
    const a = await create(api, { name: 'A' });
    const b = await create(api, { name: 'B', parentId: a.id });
    await create(api, { name: 'C', parentId: b.id });
    await create(api, { name: 'D' });
    const res = await api.get('/v1/categories/tree');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        {
          id: a.id,
          name: 'A',
          slug: 'a',
          contentCount: 0,
          children: [
            { id: b.id, name: 'B', slug: 'b', contentCount: 0, children: [{ id: expect.any(Number), name: 'C', slug: 'c', contentCount: 0, children: [] }] },
          ],
        },
        { id: expect.any(Number), name: 'D', slug: 'd', contentCount: 0, children: [] },
      ],
    });
  });

  it('answers a bare category with its parent and a paginated contents list', async () => {
    const api = await site();
    const parent = await create(api, { name: 'Parent' });
    const child = await create(api, { name: 'Child', parentId: parent.id });
    const res = await api.get(`/v1/categories/${child.id}`);
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('data');
    expect(res.body).toMatchObject({
      id: child.id,
      name: 'Child',
      parentId: parent.id,
      parent: { id: parent.id, name: 'Parent', slug: 'parent' },
      contents: { data: [], meta: { total: 0, perPage: 15, currentPage: 1, lastPage: 1 } },
    });
    expect((await api.get(`/v1/categories/${parent.id}`)).body.parent).toBeNull();
    expect((await api.get('/v1/categories/999999')).status).toBe(404);
  });
});

describe('PUT and DELETE /v1/categories/:id', () => {
  it('updates partially and refuses a cycle or itself as parent (422 PARENT_INVALID)', async () => {
    const api = await site();
    const a = await create(api, { name: 'A' });
    const b = await create(api, { name: 'B', parentId: a.id });
    const c = await create(api, { name: 'C', parentId: b.id });
    const upd = await api.put(`/v1/categories/${c.id}`, { description: 'Now described', sitemapPriority: 0.5 });
    expect(upd.status).toBe(200);
    expect(upd.body.data).toMatchObject({ name: 'C', parentId: b.id, description: 'Now described', sitemapPriority: 0.5 });
    for (const parentId of [a.id]) {
      // a under its own grandchild
      const res = await api.put(`/v1/categories/${parentId}`, { parentId: c.id });
      expect(res.status).toBe(422);
      expectErrorShape(res.body, 422, 'PARENT_INVALID');
    }
    const self = await api.put(`/v1/categories/${b.id}`, { parentId: b.id });
    expect(self.status).toBe(422);
    expect((await api.get(`/v1/categories/${a.id}`)).body.parentId).toBeNull();
    const moved = await api.put(`/v1/categories/${c.id}`, { parentId: null });
    expect(moved.body.data.parentId).toBeNull();
  });

  it('refuses a slug taken by another category and accepts its own', async () => {
    const api = await site();
    const a = await create(api, { name: 'A' });
    await create(api, { name: 'B' });
    expect((await api.put(`/v1/categories/${a.id}`, { slug: 'a' })).status).toBe(200);
    const clash = await api.put(`/v1/categories/${a.id}`, { slug: 'b' });
    expect(clash.status).toBe(422);
    expectErrorShape(clash.body, 422, 'SLUG_TAKEN');
  });

  it('keeps structured categories valid on update', async () => {
    const api = await site();
    const cat = await create(api, { name: 'S', contentMode: 'structured', schema: [titleField] });
    const cleared = await api.put(`/v1/categories/${cat.id}`, { schema: null });
    expect(cleared.status).toBe(422);
    const standard = await api.put(`/v1/categories/${cat.id}`, { schema: null, contentMode: 'standard' });
    expect(standard.status).toBe(200);
    expect(standard.body.data).toMatchObject({ schema: null, contentMode: 'standard' });
  });

  it("re-parents children to the deleted category's parent, or makes them roots", async () => {
    const api = await site();
    const a = await create(api, { name: 'A' });
    const b = await create(api, { name: 'B', parentId: a.id });
    const c1 = await create(api, { name: 'C1', parentId: b.id });
    const c2 = await create(api, { name: 'C2', parentId: b.id });
    const del = await api.delete(`/v1/categories/${b.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: expect.any(String) });
    expect((await api.get(`/v1/categories/${c1.id}`)).body.parentId).toBe(a.id);
    expect((await api.get(`/v1/categories/${c2.id}`)).body.parentId).toBe(a.id);
    await api.delete(`/v1/categories/${a.id}`);
    expect((await api.get(`/v1/categories/${c1.id}`)).body.parentId).toBeNull();
    expect((await api.get(`/v1/categories/${b.id}`)).status).toBe(404);
    expect((await api.delete(`/v1/categories/${b.id}`)).status).toBe(404);
  });
});

describe('GET /v1/categories/:id contents', () => {
  it('lists only the contents the token may see: published ones for a delivery token, all for a management token', async () => {
    const api = await site();
    const cat = await create(api, { name: 'Visible' });
    const ids: Record<string, number> = {};
    for (const status of ['published', 'draft', 'archived']) {
      const res = await api.post('/v1/contents', { type: 'post', title: `A ${status} post`, status, categoryIds: [cat.id] });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids[status] = res.body.data.id;
    }
    const all = await api.get(`/v1/categories/${cat.id}`);
    expect(all.body.contents.meta.total).toBe(3);
    const delivery = client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { kind: 'delivery', scopes: ['categories.view'] })).token);
    const published = await delivery.get(`/v1/categories/${cat.id}`);
    expect(published.status).toBe(200);
    expect(published.body.contents.data.map((c: any) => c.id)).toEqual([ids.published]);
    expect(published.body.contents.meta.total).toBe(1);
  });
});

describeTranslations(ctx, {
  path: '/v1/categories',
  body: (n) => ({ name: `Shoes ${n}`, description: 'All shoes' }),
  translated: { field: 'description', empty: null },
});

describe('translations of categories', () => {
  it("reports status per enabled locale and copies to a locale with the parent's translation as parent", async () => {
    const api = await site(['en', 'de', 'fr']);
    const parent = await create(api, { name: 'Parent', description: 'P' });
    const child = await create(api, { name: 'Child', description: 'C', image: 'https://cdn.test/c.png', parentId: parent.id });
    expect((await api.get(`/v1/categories/${child.id}/translations`)).body).toEqual({
      data: { en: { status: 'complete' }, de: { status: 'missing' }, fr: { status: 'missing' } },
    });

    const parentDe = await api.post(`/v1/categories/${parent.id}/copy-to-locale`, { targetLocale: 'de' });
    expect(parentDe.status).toBe(200);
    const childDe = await api.post(`/v1/categories/${child.id}/copy-to-locale`, { locale: 'de' });
    expect(childDe.status).toBe(200);
    expect(childDe.body.data).toMatchObject({
      locale: 'de',
      parentId: parentDe.body.data.id,
      translationGroup: child.translationGroup,
      slug: 'child',
      image: 'https://cdn.test/c.png',
    });
    const childFr = await api.post(`/v1/categories/${child.id}/copy-to-locale`, { targetLocale: 'fr' });
    expect(childFr.body.data.parentId).toBeNull();
    await api.put(`/v1/categories/${childFr.body.data.id}`, { description: null });
    expect((await api.get(`/v1/categories/${child.id}/translations`)).body.data).toEqual({
      en: { status: 'complete' },
      de: { status: 'complete' },
      fr: { status: 'partial' },
    });

    const again = await api.post(`/v1/categories/${child.id}/copy-to-locale`, { targetLocale: 'de' });
    expect(again.status).toBe(409);
    expectErrorShape(again.body, 409, 'TRANSLATION_EXISTS');
    const off = await api.post(`/v1/categories/${child.id}/copy-to-locale`, { targetLocale: 'ja' });
    expect(off.status).toBe(422);
  });
});
