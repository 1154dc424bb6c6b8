import { describe, expect, it } from 'vitest';
import { expectErrorShape } from '../../../test/helpers/http.js';
import { describeTranslations, useTestApp } from '../../../test/helpers/suite.js';

const ctx = useTestApp();
const site = ctx.site;

describe('POST /v1/tags', () => {
  it('creates a tag (201) with a slug generated from the name, the default locale and a translation group', async () => {
    const api = await site();
    const res = await api.post('/v1/tags', { name: 'Crème Brûlée & Co' });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      name: 'Crème Brûlée & Co',
      slug: 'creme-brulee-and-co',
      description: null,
      locale: 'en',
      translationGroup: expect.stringMatching(/^[0-9a-f-]{36}$/),
      contentCount: 0,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it('suffixes a generated slug on collision, and refuses an explicit colliding slug with 422 SLUG_TAKEN', async () => {
    const api = await site();
    await api.post('/v1/tags', { name: 'News', slug: 'news' });
    const second = await api.post('/v1/tags', { name: 'News!' });
    expect(second.body.data.slug).toBe('news-2');
    const third = await api.post('/v1/tags', { name: 'News?' });
    expect(third.body.data.slug).toBe('news-3');
    const clash = await api.post('/v1/tags', { name: 'Other', slug: 'news' });
    expect(clash.status).toBe(422);
    expectErrorShape(clash.body, 422, 'SLUG_TAKEN');
    expect(clash.body.errors).toHaveProperty('slug');
  });

  it('refuses a name already used in the same locale (422 NAME_TAKEN) but allows it in another locale', async () => {
    const api = await site(['en', 'de']);
    expect((await api.post('/v1/tags', { name: 'Travel' })).status).toBe(201);
    const dup = await api.post('/v1/tags', { name: 'Travel' });
    expect(dup.status).toBe(422);
    expectErrorShape(dup.body, 422, 'NAME_TAKEN');
    expect(dup.body.errors).toHaveProperty('name');
    const de = await api.post('/v1/tags', { name: 'Travel', locale: 'de' });
    expect(de.status).toBe(201);
    expect(de.body.data.slug).toBe('travel');
  });

  it('holds name and slug at 1-255 characters', async () => {
    const api = await site();
    expect((await api.post('/v1/tags', { name: 'n'.repeat(255), slug: 's'.repeat(255) })).status).toBe(201);
    for (const [body, field] of [
      [{ name: '' }, 'name'],
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ name: 'x', slug: 's'.repeat(256) }, 'slug'],
      [{ name: 'x', slug: '' }, 'slug'],
      [{ name: 'x', slug: 'Not A Slug' }, 'slug'],
      [{}, 'name'],
    ] as const) {
      const res = await api.post('/v1/tags', body);
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(422);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
  });

  it('refuses a locale that is not enabled, or not a language tag, with 422 on locale', async () => {
    const api = await site();
    const off = await api.post('/v1/tags', { name: 'Hallo', locale: 'de' });
    expect(off.status).toBe(422);
    expectErrorShape(off.body, 422, 'LOCALE_NOT_ENABLED');
    expect(off.body.errors).toHaveProperty('locale');
    const bad = await api.post('/v1/tags', { name: 'Hallo', locale: 'xx_!!' });
    expect(bad.status).toBe(422);
    expect((await api.get('/v1/tags')).body.meta.total).toBe(0);
  });
});

describe('generated slugs under concurrent creates (issue 36 item 9, decisions HR2)', () => {
  it('ten parallel creates of names with one slug answer ten 201s with the slug, -2 ... -10', async () => {
    const api = await site();
    const names = [...'!?.,;:*+=~'].map((p) => `Race${p}`);
    const answers = await Promise.all(names.map((name) => api.post('/v1/tags', { name })));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(201));
    const slugs = answers.map((r) => r.body.data.slug as string).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    expect(slugs).toEqual(['race', ...Array.from({ length: 9 }, (_, i) => `race-${i + 2}`)]);
  });
});

describe('GET /v1/tags', () => {
  async function seeded() {
    const api = await site(['en', 'de']);
    const ids: Record<string, number> = {};
    for (const name of ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']) {
      ids[name] = (await api.post('/v1/tags', { name, description: `About ${name.toLowerCase()}` })).body.data.id;
      await new Promise((r) => setTimeout(r, 3));
    }
    ids.Deutsch = (await api.post('/v1/tags', { name: 'Deutsch', locale: 'de' })).body.data.id;
    return { api, ids };
  }

  it('paginates with meta, newest first by default', async () => {
    const { api } = await seeded();
    const res = await api.get('/v1/tags?limit=2&page=2');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ total: 6, perPage: 2, currentPage: 2, lastPage: 3 });
    expect(res.body.data.map((t: any) => t.name)).toEqual(['Delta', 'Charlie']);
    const beyond = await api.get('/v1/tags?limit=2&page=9');
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta.lastPage).toBe(3);
  });

  it('defaults to 15 per page and holds limit to 1-100 with 422 outside', async () => {
    const { api } = await seeded();
    expect((await api.get('/v1/tags')).body.meta.perPage).toBe(15);
    expect((await api.get('/v1/tags?limit=100')).status).toBe(200);
    for (const q of ['limit=101', 'limit=0', 'page=0', 'limit=abc']) {
      const res = await api.get(`/v1/tags?${q}`);
      expect(res.status, q).toBe(422);
      expectErrorShape(res.body, 422);
    }
  });

  it('sorts by name, slug, created_at, updated_at and refuses other fields with 422', async () => {
    const { api } = await seeded();
    const asc = await api.get('/v1/tags?sortBy=name&sortOrder=asc&locale=en');
    expect(asc.body.data.map((t: any) => t.name)).toEqual(['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo']);
    const desc = await api.get('/v1/tags?sortBy=slug&sortOrder=desc&locale=en');
    expect(desc.body.data[0].name).toBe('Echo');
    const bad = await api.get('/v1/tags?sortBy=password');
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toHaveProperty('sortBy');
    expect((await api.get('/v1/tags?sortOrder=sideways')).status).toBe(422);
  });

  it('filters by search, slug, slugs[], ids[], excludeIds[], locale and dates', async () => {
    const { api, ids } = await seeded();
    const names = async (q: string) => (await api.get(`/v1/tags?${q}&sortBy=name&sortOrder=asc`)).body.data.map((t: any) => t.name);
    expect(await names('search=CHAR')).toEqual(['Charlie']);
    expect(await names('search=about%20e')).toEqual(['Echo']);
    expect(await names('search=%25')).toEqual([]);
    expect(await names('slug=bravo')).toEqual(['Bravo']);
    expect(await names('slugs[]=alpha&slugs[]=delta')).toEqual(['Alpha', 'Delta']);
    expect(await names(`ids[]=${ids.Alpha}&ids[]=${ids.Echo}`)).toEqual(['Alpha', 'Echo']);
    expect(await names(`ids=${ids.Bravo}`)).toEqual(['Bravo']);
    expect(await names(`excludeIds[]=${ids.Alpha}&excludeIds[]=${ids.Bravo}&locale=en`)).toEqual(['Charlie', 'Delta', 'Echo']);
    expect(await names('locale=de')).toEqual(['Deutsch']);
    expect(await names('dateFrom=2000-01-01&dateTo=2000-12-31')).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await names(`dateFrom=${today}&dateTo=${today}`)).length).toBe(6);
    expect((await api.get('/v1/tags?dateFrom=yesterday')).status).toBe(422);
  });

  it("never lists another site's tags", async () => {
    const { api } = await seeded();
    const other = await site();
    await other.post('/v1/tags', { name: 'Alpha' });
    expect((await other.get('/v1/tags')).body.meta.total).toBe(1);
    expect((await api.get('/v1/tags')).body.meta.total).toBe(6);
  });
});

describe('GET, PUT and DELETE /v1/tags/:id', () => {
  it('reads, updates (partial) and deletes a tag', async () => {
    const api = await site();
    const { id } = (await api.post('/v1/tags', { name: 'Old', description: 'keep me' })).body.data;
    expect((await api.get(`/v1/tags/${id}`)).body.data.name).toBe('Old');
    const upd = await api.put(`/v1/tags/${id}`, { name: 'New', slug: 'new-slug' });
    expect(upd.status).toBe(200);
    expect(upd.body.data).toMatchObject({ id, name: 'New', slug: 'new-slug', description: 'keep me' });
    const del = await api.delete(`/v1/tags/${id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: expect.any(String) });
    expect((await api.get(`/v1/tags/${id}`)).status).toBe(404);
    expect((await api.delete(`/v1/tags/${id}`)).status).toBe(404);
  });

  it("refuses to rename onto another tag's name or slug, but accepts its own", async () => {
    const api = await site();
    const a = (await api.post('/v1/tags', { name: 'A' })).body.data;
    await api.post('/v1/tags', { name: 'B' });
    expect((await api.put(`/v1/tags/${a.id}`, { name: 'A', slug: 'a' })).status).toBe(200);
    const byName = await api.put(`/v1/tags/${a.id}`, { name: 'B' });
    expect(byName.status).toBe(422);
    expectErrorShape(byName.body, 422, 'NAME_TAKEN');
    const bySlug = await api.put(`/v1/tags/${a.id}`, { slug: 'b' });
    expect(bySlug.status).toBe(422);
    expectErrorShape(bySlug.body, 422, 'SLUG_TAKEN');
    expect((await api.get(`/v1/tags/${a.id}`)).body.data.name).toBe('A');
  });

  it('answers 404 for an unknown id and 422 for a non-numeric one', async () => {
    const api = await site();
    expect((await api.get('/v1/tags/999999')).status).toBe(404);
    expect((await api.get('/v1/tags/abc')).status).toBe(422);
  });
});

describeTranslations(ctx, {
  path: '/v1/tags',
  body: (n) => ({ name: `Shoes ${n}`, description: 'All shoes' }),
  translated: { field: 'description', empty: null },
});

describe('translations of tags', () => {
  it('copies name, slug and description, in the same group', async () => {
    const api = await site(['en', 'de', 'fr']);
    const en = (await api.post('/v1/tags', { name: 'Music', description: 'Songs' })).body.data;
    const copy = await api.post(`/v1/tags/${en.id}/copy-to-locale`, { targetLocale: 'de' });
    expect(copy.status).toBe(200);
    expect(copy.body.data).toMatchObject({ name: 'Music', slug: 'music', description: 'Songs', locale: 'de', translationGroup: en.translationGroup });
  });
});
