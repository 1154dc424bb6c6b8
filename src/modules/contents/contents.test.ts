import { describe, expect, it } from 'vitest';
import { createTokenFor, allScopesExcept, TEST_DIALECT } from '../../../test/helpers/app.js';
import { client, expect422, expectErrorShape, type Client } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { lastArrivalAt } from '../../shared/time-slice.js';
import * as m0048 from '../../db/migrations/0048_content_link_lists.js';

const ctx = useTestApp();

interface SiteApi {
  api: Client;
  siteId: string;
  userId: string;
}
async function site(locales: string[] = ['en']): Promise<SiteApi> {
  const api = await ctx.site(locales);
  return { api, siteId: api.siteId, userId: api.userId };
}

async function post(api: Client, body: Record<string, unknown> = {}) {
  const res = await api.post('/v1/contents', { type: 'post', title: 'A post', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function outbox(siteId: string) {
  return ctx.app.database.db
    .selectFrom('outbox_events')
    .select(['type', 'payload'])
    .where('site_id', '=', siteId)
    .orderBy('id')
    .execute()
    .then((rows) => rows.map((r) => ({ type: r.type, data: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload })));
}

const future = (ms = 60_000) => new Date(Date.now() + ms).toISOString();

describe('POST /v1/contents', () => {
  it('creates a draft (201) with the detail shape, a slug from the title, the author and a first revision', async () => {
    const { api, userId } = await site();
    const res = await api.post('/v1/contents', { type: 'post', title: 'Hello, Wörld!', bodyMarkdown: '# Heading\n\nSome **bold** text.', excerpt: 'Short' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      id: expect.any(Number),
      title: 'Hello, Wörld!',
      slug: 'hello-world',
      type: 'post',
      status: 'draft',
      excerpt: 'Short',
      locale: 'en',
      featuredImage: null,
      categories: [],
      tags: [],
      author: { id: userId, fullName: 'Site owner' },
      publishedAt: null,
      scheduledAt: null,
      bodyHtml: '<h1>Heading</h1><p>Some <strong>bold</strong> text.</p>',
      alternates: [],
      customData: null,
      meta: { metaTitle: null, metaDescription: null, metaKeywords: null, canonicalUrl: null, ogImage: null },
    });
    expect(res.body.data.body).toMatchObject({ type: 'doc' });
    const revisions = await api.get(`/v1/contents/${res.body.data.id}/revisions`);
    expect(revisions.body.data).toHaveLength(1);
    expect(revisions.body.data[0]).toMatchObject({ action: 'create', author: { id: userId } });
  });

  it('answers a create with what a read of it answers, and its first revision holds the same state (the row is built from the insert, not read back)', async () => {
    const { api } = await site();
    const cat = (await api.post('/v1/categories', { name: 'Cat' })).body.data;
    const tag1 = (await api.post('/v1/tags', { name: 'One' })).body.data;
    const tag2 = (await api.post('/v1/tags', { name: 'Two' })).body.data;
    const res = await api.post('/v1/contents', {
      type: 'post',
      title: 'Every field',
      excerpt: 'An excerpt',
      bodyMarkdown: '# Title\n\nText with [a link](https://example.com) and **bold**.',
      status: 'scheduled',
      scheduledAt: future(),
      categoryIds: [cat.id],
      tagIds: [tag2.id, tag1.id],
      featuredImageUrl: 'https://cdn.example.com/a.jpg',
      featuredImageAlt: 'Alt',
      metaTitle: 'Meta',
      metaDescription: 'Description',
      metaKeywords: 'k1, k2',
      canonicalUrl: 'https://example.com/every-field',
      ogImage: 'https://cdn.example.com/og.jpg',
      metadata: { nested: { list: [1, 'two', null] }, flag: true },
      structuredData: { article: { enabled: true, type: 'BlogPosting' }, faq: [{ question: 'Q?', answer: 'A.' }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const read = await api.get(`/v1/contents/${res.body.data.id}`);
    expect(read.status).toBe(200);
    expect(res.body.data).toEqual(read.body);
    expect(res.body.data.tags.map((t: { id: number }) => t.id)).toEqual([tag2.id, tag1.id]);
    const [revision] = (await api.get(`/v1/contents/${res.body.data.id}/revisions`)).body.data;
    const { snapshot } = (await api.get(`/v1/contents/${res.body.data.id}/revisions/${revision.id}`)).body.data;
    const d = read.body;
    expect(snapshot).toMatchObject({
      title: d.title,
      slug: d.slug,
      excerpt: d.excerpt,
      status: 'scheduled',
      scheduledAt: d.scheduledAt,
      publishedAt: null,
      categoryIds: [cat.id],
      tagIds: [tag2.id, tag1.id],
      featuredImageUrl: 'https://cdn.example.com/a.jpg',
      metadata: d.metadata,
      structuredData: { article: { enabled: true, type: 'BlogPosting' }, faq: [{ question: 'Q?', answer: 'A.' }] },
    });
    expect(snapshot.body).toEqual(d.body);
  });

  it('sanitizes the body: scripts, event handlers and javascript: links come out harmless', async () => {
    const { api } = await site();
    const c = await post(api, {
      bodyMarkdown: '<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[click](javascript:alert(1)) and [ok](https://example.com)',
    });
    // Raw HTML in markdown becomes escaped text; no tag, attribute or link can carry script.
    expect(c.bodyHtml).not.toMatch(/<script/i);
    expect(c.bodyHtml).not.toMatch(/<[^>]+\son\w+=/i);
    expect(c.bodyHtml).not.toMatch(/href="\s*javascript:/i);
    expect(c.bodyHtml).toContain('&lt;script&gt;');
    expect(c.bodyHtml).toContain('<a href="https://example.com">ok</a>');
  });

  it('accepts a ProseMirror body and refuses an invalid one with 422 BODY_INVALID naming the path', async () => {
    const { api } = await site();
    const c = await post(api, { body: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'From JSON' }] }] } });
    expect(c.bodyHtml).toBe('<p>From JSON</p>');
    const bad = await api.post('/v1/contents', {
      type: 'post',
      title: 'x',
      body: { type: 'doc', content: [{ type: 'heading', attrs: { level: 9 }, content: [{ type: 'text', text: 'x' }] }] },
    });
    expect(bad.status).toBe(422);
    expectErrorShape(bad.body, 422, 'BODY_INVALID');
    expect(Object.keys(bad.body.errors)[0]).toMatch(/^body\.content\[0\]/);
  });

  it('holds every input limit at its boundary', async () => {
    const { api } = await site();
    await post(api, {
      title: 't'.repeat(500),
      slug: 's'.repeat(500),
      metaTitle: 'm'.repeat(255),
      metaDescription: 'd'.repeat(500),
      metaKeywords: 'k'.repeat(500),
      canonicalUrl: `https://a.test/${'c'.repeat(985)}`,
      ogImage: `https://a.test/${'o'.repeat(985)}`,
    });
    for (const [patch, field] of [
      [{ title: 't'.repeat(501) }, 'title'],
      [{ title: '' }, 'title'],
      [{ slug: 's'.repeat(501) }, 'slug'],
      [{ metaTitle: 'm'.repeat(256) }, 'metaTitle'],
      [{ metaDescription: 'd'.repeat(501) }, 'metaDescription'],
      [{ metaKeywords: 'k'.repeat(501) }, 'metaKeywords'],
      [{ canonicalUrl: `https://a.test/${'c'.repeat(986)}` }, 'canonicalUrl'],
      [{ ogImage: `https://a.test/${'o'.repeat(986)}` }, 'ogImage'],
      [{ type: 'page' }, 'type'],
      [{ status: 'live' }, 'status'],
    ] as const) {
      const res = await api.post('/v1/contents', { type: 'post', title: 'x', ...patch });
      expect(res.status, JSON.stringify(patch).slice(0, 60)).toBe(422);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    const noType = await api.post('/v1/contents', { title: 'x' });
    expect(noType.status).toBe(422);
    expect(noType.body.errors).toHaveProperty('type');
    expect((await api.get('/v1/contents')).body.meta.total).toBe(1);
  });

  it('suffixes generated slugs and refuses an explicit duplicate with 422 SLUG_TAKEN (per locale)', async () => {
    const { api } = await site(['en', 'de']);
    await post(api, { title: 'Same' });
    expect((await post(api, { title: 'Same' })).slug).toBe('same-2');
    const dup = await api.post('/v1/contents', { type: 'post', title: 'x', slug: 'same' });
    expect(dup.status).toBe(422);
    expectErrorShape(dup.body, 422, 'SLUG_TAKEN');
    expect((await post(api, { title: 'x', slug: 'same', locale: 'de' })).slug).toBe('same');
  });

  it('takes its locale in the canonical case, defaults to the site default, and refuses a locale the site has not enabled with 422, writing nothing (decisions PF21)', async () => {
    const { api, siteId } = await site(['en', 'de']);
    expect((await post(api, { title: 'Default' })).locale).toBe('en');
    expect((await post(api, { title: 'Upper', locale: 'DE' })).locale).toBe('de');
    const refused = await api.post('/v1/contents', { type: 'post', title: 'Français', locale: 'fr', bodyMarkdown: 'Un [lien](https://example.org/).' });
    expect422(refused, 'LOCALE_NOT_ENABLED', ['locale']);
    expect422(await api.post('/v1/contents', { type: 'post', title: 'Bad', locale: 'not a locale!' }), 'LOCALE_INVALID', ['locale']);
    // Nothing of either refused create was kept: its row, its revision, its outbound link.
    expect((await api.get('/v1/contents')).body.meta.total).toBe(2);
    const revisions = await ctx.app.database.db.selectFrom('content_revisions').select('id').where('site_id', '=', siteId).execute();
    expect(revisions).toHaveLength(2);
    const links = await ctx.app.database.db.selectFrom('content_links_out').select('target_url').where('site_id', '=', siteId).execute();
    expect(links).toEqual([]);
  });

  it("refuses categoryIds and tagIds that are not the site's with 422", async () => {
    const { api } = await site();
    const other = await site();
    const foreignCat = (await other.api.post('/v1/categories', { name: 'Foreign' })).body.data.id;
    const foreignTag = (await other.api.post('/v1/tags', { name: 'Foreign' })).body.data.id;
    const cat = await api.post('/v1/contents', { type: 'post', title: 'x', categoryIds: [foreignCat] });
    expect(cat.status).toBe(422);
    expectErrorShape(cat.body, 422, 'CATEGORY_NOT_FOUND');
    expect(cat.body.errors).toHaveProperty('categoryIds');
    const tag = await api.post('/v1/contents', { type: 'post', title: 'x', tagIds: [String(foreignTag)] });
    expect(tag.status).toBe(422);
    expectErrorShape(tag.body, 422, 'TAG_NOT_FOUND');
    expect((await api.get('/v1/contents')).body.meta.total).toBe(0);
  });

  it('links categories and tags (ids as numbers or strings) and reports them in order', async () => {
    const { api } = await site();
    const c1 = (await api.post('/v1/categories', { name: 'One' })).body.data;
    const c2 = (await api.post('/v1/categories', { name: 'Two' })).body.data;
    const t1 = (await api.post('/v1/tags', { name: 'Tag' })).body.data;
    const c = await post(api, { categoryIds: [c2.id, String(c1.id)], tagIds: [t1.id] });
    expect(c.categories).toEqual([
      { id: c2.id, name: 'Two', slug: 'two' },
      { id: c1.id, name: 'One', slug: 'one' },
    ]);
    expect(c.tags).toEqual([{ id: t1.id, name: 'Tag', slug: 'tag' }]);
  });
});

describe('generated slugs under concurrent creates (issue 36 item 9, decisions HR2)', () => {
  it('ten parallel creates of one title without a slug answer ten 201s with the slug, -2 ... -10', async () => {
    const { api } = await site();
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.post('/v1/contents', { type: 'post', title: 'Same title' })));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(201));
    const slugs = answers.map((r) => r.body.data.slug as string).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    expect(slugs).toEqual([
      'same-title',
      'same-title-2',
      'same-title-3',
      'same-title-4',
      'same-title-5',
      'same-title-6',
      'same-title-7',
      'same-title-8',
      'same-title-9',
      'same-title-10',
    ]);
    expect((await api.get('/v1/contents?limit=100')).body.meta.total).toBe(10);
    // A slug the client sends is never changed: its clash stays a 422.
    const sent = await Promise.all(Array.from({ length: 3 }, () => api.post('/v1/contents', { type: 'post', title: 'X', slug: 'fixed' })));
    expect(sent.map((r) => r.status).sort()).toEqual([201, 422, 422]);
    for (const r of sent.filter((r) => r.status === 422)) expectErrorShape(r.body, 422, 'SLUG_TAKEN');
  });
});

describe('customData and structured categories', () => {
  it('refuses customData without a structured category, validates it against the effective schema, and accepts valid data', async () => {
    const { api } = await site();
    const plain = (await api.post('/v1/categories', { name: 'Plain' })).body.data;
    const recipes = (
      await api.post('/v1/categories', { name: 'Recipes', contentMode: 'structured', schema: [{ name: 'minutes', type: 'number', required: true }] })
    ).body.data;
    const sub = (await api.post('/v1/categories', { name: 'Soups', parentId: recipes.id, contentMode: 'structured', schemaSource: 'inherit' })).body.data;
    const none = await api.post('/v1/contents', { type: 'post', title: 'x', customData: { minutes: 5 } });
    expect(none.status).toBe(422);
    expectErrorShape(none.body, 422, 'CUSTOM_DATA_NOT_ALLOWED');
    const plainCat = await api.post('/v1/contents', { type: 'post', title: 'x', categoryIds: [plain.id], customData: { minutes: 5 } });
    expect(plainCat.status).toBe(422);
    const wrong = await api.post('/v1/contents', { type: 'post', title: 'x', categoryIds: [sub.id], customData: { minutes: 'five' } });
    expect(wrong.status).toBe(422);
    expectErrorShape(wrong.body, 422, 'DATA_INVALID');
    expect(Object.keys(wrong.body.errors)).toEqual(['customData.minutes']);
    const ok = await post(api, { categoryIds: [sub.id], customData: { minutes: 20 } });
    expect(ok.customData).toEqual({ minutes: 20 });
    const moved = await api.put(`/v1/contents/${ok.id}`, { categoryIds: [plain.id] });
    expect(moved.status).toBe(422);
  });
});

describe('status rules', () => {
  it('needs a future scheduledAt for scheduled (422 otherwise) and writes the publish job', async () => {
    const { api, siteId } = await site();
    const missing = await api.post('/v1/contents', { type: 'post', title: 'x', status: 'scheduled' });
    expect(missing.status).toBe(422);
    expectErrorShape(missing.body, 422, 'SCHEDULED_AT_REQUIRED');
    expect(missing.body.errors).toHaveProperty('scheduledAt');
    const past = await api.post('/v1/contents', { type: 'post', title: 'x', status: 'scheduled', scheduledAt: new Date(Date.now() - 1000).toISOString() });
    expect(past.status).toBe(422);
    expectErrorShape(past.body, 422, 'SCHEDULED_AT_PAST');
    const at = future();
    const ok = await post(api, { status: 'scheduled', scheduledAt: at });
    expect(ok).toMatchObject({ status: 'scheduled', scheduledAt: at, publishedAt: null });
    const jobs = await ctx.app.database.db.selectFrom('jobs').select(['type', 'run_at']).where('site_id', '=', siteId).execute();
    expect(jobs).toEqual([{ type: 'content.publish', run_at: at }]);
  });

  it('publishes on create with publishedAt and one content.published event', async () => {
    const { api, siteId } = await site();
    const c = await post(api, { status: 'published' });
    expect(c.status).toBe('published');
    expect(Date.parse(c.publishedAt)).toBeGreaterThan(Date.now() - 10_000);
    expect(await outbox(siteId)).toEqual([
      { type: 'content.published', data: { id: c.id, title: 'A post', slug: c.slug, locale: 'en', status: 'published', publishedAt: c.publishedAt } },
    ]);
  });

  it('never unpublishes on an update without status; PUT to draft does', async () => {
    const { api } = await site();
    const c = await post(api, { status: 'published' });
    const upd = await api.put(`/v1/contents/${c.id}`, { title: 'Edited' });
    expect(upd.body.data).toMatchObject({ title: 'Edited', status: 'published', publishedAt: c.publishedAt });
    const draft = await api.put(`/v1/contents/${c.id}`, { status: 'draft' });
    expect(draft.body.data.status).toBe('draft');
  });

  it('needs contents.publish to set published, scheduled or archived, on create and on PUT (decisions G12, H10)', async () => {
    const { siteId } = await site();
    const writer = await createTokenFor(ctx.app, siteId, { scopes: allScopesExcept('contents.publish') });
    const api = client(ctx.app, writer.token);
    const created = await api.post('/v1/contents', { type: 'post', title: 'x', status: 'published' });
    expect(created.status).toBe(403);
    const c = await post(api);
    const put = await api.put(`/v1/contents/${c.id}`, { status: 'published' });
    expect(put.status).toBe(403);
    expectErrorShape(put.body, 403, 'MISSING_SCOPE');
    const sched = await api.put(`/v1/contents/${c.id}`, { status: 'scheduled', scheduledAt: future() });
    expect(sched.status).toBe(403);
    const archived = await api.put(`/v1/contents/${c.id}`, { status: 'archived' });
    expect(archived.status).toBe(403);
    expectErrorShape(archived.body, 403, 'MISSING_SCOPE');
    expect((await api.post('/v1/contents', { type: 'post', title: 'y', status: 'archived' })).status).toBe(403);
    expect((await api.get(`/v1/contents/${c.id}`)).body.status).toBe('draft');
    expect((await api.get('/v1/contents')).body.meta.total).toBe(1);
    // Other fields still update without it, and a draft stays a draft.
    expect((await api.put(`/v1/contents/${c.id}`, { title: 'renamed', status: 'draft' })).status).toBe(200);
  });

  it('needs contents.publish to take a content out of published, scheduled or archived, also through PUT (H10)', async () => {
    const { api: owner, siteId } = await site();
    const writer = client(ctx.app, (await createTokenFor(ctx.app, siteId, { scopes: allScopesExcept('contents.publish') })).token);
    const published = await post(owner, { status: 'published' });
    const scheduled = await post(owner, { status: 'scheduled', scheduledAt: future() });
    const archived = await post(owner, { status: 'archived' });
    for (const [c, from] of [
      [published, 'published'],
      [scheduled, 'scheduled'],
      [archived, 'archived'],
    ] as const) {
      const res = await writer.put(`/v1/contents/${c.id}`, { status: 'draft' });
      expect(res.status, from).toBe(403);
      expect((await owner.get(`/v1/contents/${c.id}`)).body.status).toBe(from);
    }
    expect((await writer.put(`/v1/contents/${published.id}`, { title: 'only the title' })).status).toBe(200);
    expect((await owner.put(`/v1/contents/${published.id}`, { status: 'draft' })).status).toBe(200);
  });

  it("lets contents.publish.own change the status of the token user's own contents only", async () => {
    const { api: owner, siteId } = await site();
    const own = await createTokenFor(ctx.app, siteId, { newUser: 'Author', scopes: [...allScopesExcept('contents.publish'), 'contents.publish.own'] });
    const author = client(ctx.app, own.token);
    const mine = await post(author, { status: 'published' });
    expect(mine.status).toBe('published');
    expect((await author.put(`/v1/contents/${mine.id}`, { status: 'archived' })).status).toBe(200);
    const theirs = await post(owner, { status: 'published' });
    const res = await author.put(`/v1/contents/${theirs.id}`, { status: 'draft' });
    expect(res.status).toBe(403);
    expectErrorShape(res.body, 403, 'MISSING_SCOPE');
    expect((await owner.get(`/v1/contents/${theirs.id}`)).body.status).toBe('published');
  });

  it('emits content.archived when a PUT archives a published content', async () => {
    const { api, siteId } = await site();
    const c = await post(api, { status: 'published' });
    await api.put(`/v1/contents/${c.id}`, { status: 'archived' });
    expect((await outbox(siteId)).map((e) => e.type)).toEqual(['content.published', 'content.archived']);
  });
});

describe('bulk operations (decisions G16)', () => {
  it('refuses 51 ids with 422 and changes nothing', async () => {
    const { api, siteId } = await site();
    const c = await post(api);
    const ids = [c.id, ...Array.from({ length: 50 }, (_, i) => 900000 + i)];
    const res = await api.post('/v1/contents/bulk/publish', { ids });
    expect(res.status).toBe(422);
    expect(res.body.errors).toHaveProperty('ids');
    expect((await api.get(`/v1/contents/${c.id}`)).body.status).toBe('draft');
    expect(await outbox(siteId)).toEqual([]);
    expect((await api.post('/v1/contents/bulk/publish', { ids: [] })).status).toBe(422);
  });

  it('publishes draft and scheduled contents among 50 mixed ids, skips published and unknown ones, and counts only changes', async () => {
    const { api, siteId } = await site();
    const other = await site();
    const drafts = [await post(api), await post(api)];
    const scheduled = await post(api, { status: 'scheduled', scheduledAt: future() });
    const published = await post(api, { status: 'published' });
    const foreign = await post(other.api);
    const ids = [...drafts.map((d) => d.id), scheduled.id, published.id, foreign.id, drafts[0].id, ...Array.from({ length: 44 }, (_, i) => 800000 + i)];
    expect(ids).toHaveLength(50);
    const res = await api.post('/v1/contents/bulk/publish', { ids });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ published: 3 });
    const events = await outbox(siteId);
    expect(
      events
        .filter((e) => e.type === 'content.published')
        .map((e) => e.data.id)
        .sort(),
    ).toEqual([published.id, ...drafts.map((d) => d.id), scheduled.id].sort());
    expect(events).toHaveLength(4); // one from creating `published`, three from the bulk
    for (const c of [...drafts, scheduled]) {
      const got = (await api.get(`/v1/contents/${c.id}`)).body;
      expect(got.status).toBe('published');
      expect(got.publishedAt).toEqual(expect.any(String));
      expect(got.scheduledAt).toBeNull();
    }
    expect((await other.api.get(`/v1/contents/${foreign.id}`)).body.status).toBe('draft');
    expect(await ctx.app.database.db.selectFrom('jobs').select('id').where('site_id', '=', siteId).execute()).toEqual([]);
    const revisions = await api.get(`/v1/contents/${scheduled.id}/revisions`);
    expect(revisions.body.data[0].action).toBe('publish');
  });

  it('archives (with one content.archived each) and deletes in bulk, skipping what does not change', async () => {
    const { api, siteId } = await site();
    const a = await post(api, { status: 'published' });
    const b = await post(api, { status: 'published' });
    const archived = await api.post('/v1/contents/bulk/archive', { ids: [a.id, b.id] });
    expect(archived.body).toEqual({ archived: 2 });
    expect((await api.post('/v1/contents/bulk/archive', { ids: [a.id] })).body).toEqual({ archived: 0 });
    expect((await outbox(siteId)).filter((e) => e.type === 'content.archived')).toHaveLength(2);
    const deleted = await api.post('/v1/contents/bulk/delete', { ids: [a.id, b.id, a.id, 999999] });
    expect(deleted.body).toEqual({ deleted: 2 });
    expect((await api.get(`/v1/contents/${a.id}`)).status).toBe(404);
    const revs = await ctx.app.database.db.selectFrom('content_revisions').select('id').where('content_id', 'in', [a.id, b.id]).execute();
    expect(revs).toEqual([]);
  });
});

describe('scheduled publishing', () => {
  it('publishes a due content from the jobs table, once, with a revision and one content.published', async () => {
    const { api, siteId } = await site();
    const c = await post(api, { status: 'scheduled', scheduledAt: future(1200) });
    expect(await ctx.app.worker.runDueJobs()).toBe(0);
    await new Promise((r) => setTimeout(r, 1300));
    const started = Date.now();
    expect(await ctx.app.worker.runDueJobs()).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
    const got = (await api.get(`/v1/contents/${c.id}`)).body;
    expect(got.status).toBe('published');
    expect(got.publishedAt).toEqual(expect.any(String));
    expect((await outbox(siteId)).map((e) => [e.type, e.data.id])).toEqual([['content.published', c.id]]);
    expect((await api.get(`/v1/contents/${c.id}/revisions`)).body.data[0]).toMatchObject({ action: 'publish', author: null });
    expect(await ctx.app.worker.runDueJobs()).toBe(0);
  });

  it('moves the job when scheduledAt changes and drops it when the status leaves scheduled', async () => {
    const { api, siteId } = await site();
    const c = await post(api, { status: 'scheduled', scheduledAt: future(60_000) });
    const later = future(120_000);
    await api.put(`/v1/contents/${c.id}`, { scheduledAt: later });
    const jobs = () => ctx.app.database.db.selectFrom('jobs').select(['run_at']).where('site_id', '=', siteId).execute();
    expect(await jobs()).toEqual([{ run_at: later }]);
    const past = await api.put(`/v1/contents/${c.id}`, { scheduledAt: new Date(Date.now() - 5000).toISOString() });
    expect(past.status).toBe(422);
    await api.put(`/v1/contents/${c.id}`, { status: 'draft' });
    expect(await jobs()).toEqual([]);
  });
});

describe('revisions (decisions C3)', () => {
  it('lists revisions newest first with the changed fields, and restores one as a new revision', async () => {
    const { api } = await site();
    const c = await post(api, { title: 'First title', bodyMarkdown: 'Version one' });
    await api.put(`/v1/contents/${c.id}`, { title: 'Second title', bodyMarkdown: 'Version two' });
    await api.put(`/v1/contents/${c.id}`, { excerpt: 'Now with excerpt' });
    const list = await api.get(`/v1/contents/${c.id}/revisions`);
    expect(list.body.meta.total).toBe(3);
    expect(list.body.data.map((r: any) => r.action)).toEqual(['update', 'update', 'create']);
    expect(list.body.data[0].changedFields).toEqual(['excerpt']);
    expect(list.body.data[1].changedFields).toEqual(['title', 'body']);
    const first = list.body.data[2];
    const detail = await api.get(`/v1/contents/${c.id}/revisions/${first.id}`);
    expect(detail.body.data.snapshot).toMatchObject({ title: 'First title', excerpt: null });
    const restored = await api.post(`/v1/contents/${c.id}/revisions/${first.id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.data).toMatchObject({ title: 'First title', excerpt: null, bodyHtml: '<p>Version one</p>', status: 'draft' });
    const after = await api.get(`/v1/contents/${c.id}/revisions`);
    expect(after.body.data[0]).toMatchObject({ action: 'restore', changedFields: ['title', 'excerpt', 'body'] });
    expect((await api.get(`/v1/contents/${c.id}/revisions/999999`)).status).toBe(404);
  });
});

describe('GET /v1/contents', () => {
  it('lists summaries without a body, with categories, tags and author', async () => {
    const { api } = await site();
    const cat = (await api.post('/v1/categories', { name: 'News' })).body.data;
    await post(api, { title: 'Listed', categoryIds: [cat.id], bodyMarkdown: 'secret body' });
    const res = await api.get('/v1/contents');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ total: 1, perPage: 15, currentPage: 1, lastPage: 1, nextCursor: null });
    const item = res.body.data[0];
    expect(item).not.toHaveProperty('bodyHtml');
    expect(item).not.toHaveProperty('body');
    expect(item.categories).toEqual([{ id: cat.id, name: 'News', slug: 'news' }]);
    expect(item.author.fullName).toBe('Site owner');
  });

  it('filters by every list filter', async () => {
    const { api, siteId } = await site(['en', 'de']);
    const cat = (await api.post('/v1/categories', { name: 'Cat' })).body.data;
    const structured = (await api.post('/v1/categories', { name: 'Struct', contentMode: 'structured', schema: [{ name: 'x', type: 'string' }] })).body.data;
    const tag = (await api.post('/v1/tags', { name: 'Tag' })).body.data;
    const a = await post(api, { title: 'Alpha', categoryIds: [cat.id], tagIds: [tag.id], featuredImageUrl: 'https://cdn.test/a.png', status: 'published' });
    const b = await post(api, { title: 'Bravo', categoryIds: [structured.id] });
    const c = await post(api, { title: 'Charlie', locale: 'de', status: 'scheduled', scheduledAt: future() });
    const writer = await createTokenFor(ctx.app, siteId, { newUser: 'Writer' });
    const d = await post(client(ctx.app, writer.token), { title: 'Delta', status: 'archived' });
    const titles = async (q: string) => (await api.get(`/v1/contents?sortBy=title&sortOrder=asc&${q}`)).body.data.map((x: any) => x.title);
    expect(await titles('status=published')).toEqual(['Alpha']);
    expect(await titles('status=scheduled')).toEqual(['Charlie']);
    expect(await titles(`categoryIds[]=${cat.id}&categoryIds[]=${structured.id}`)).toEqual(['Alpha', 'Bravo']);
    expect(await titles(`tagIds[]=${tag.id}`)).toEqual(['Alpha']);
    expect(await titles(`authorId=${writer.userId}`)).toEqual(['Delta']);
    // Each row with its own author (joined per row, decisions N14).
    const authors = (await api.get('/v1/contents?sortBy=title&sortOrder=asc')).body.data.map((x: any) => [x.title, x.author?.fullName]);
    expect(authors).toEqual([
      ['Alpha', 'Site owner'],
      ['Bravo', 'Site owner'],
      ['Charlie', 'Site owner'],
      ['Delta', 'Writer'],
    ]);
    expect((await api.get(`/v1/contents/${d.id}`)).body.author).toEqual({ id: writer.userId, fullName: 'Writer' });
    expect(await titles('slug=bravo')).toEqual(['Bravo']);
    expect(await titles('slugs[]=alpha&slugs[]=delta')).toEqual(['Alpha', 'Delta']);
    expect(await titles(`ids[]=${a.id}&ids[]=${c.id}`)).toEqual(['Alpha', 'Charlie']);
    expect(await titles(`excludeIds[]=${a.id}&excludeIds[]=${b.id}`)).toEqual(['Charlie', 'Delta']);
    expect(await titles('uncategorized=true')).toEqual(['Charlie', 'Delta']);
    expect(await titles('untagged=false')).toEqual(['Alpha']);
    expect(await titles('hasFeaturedImage=true')).toEqual(['Alpha']);
    expect(await titles('contentMode=structured')).toEqual(['Bravo']);
    expect(await titles('contentMode=standard')).toEqual(['Alpha', 'Charlie', 'Delta']);
    expect(await titles('locale=de')).toEqual(['Charlie']);
    expect(await titles(`translationGroup=${d.translationGroup}`)).toEqual(['Delta']);
    const today = new Date().toISOString().slice(0, 10);
    expect(await titles(`publishedFrom=${today}&publishedTo=${today}`)).toEqual(['Alpha']);
    expect(await titles('publishedTo=2001-01-01')).toEqual([]);
    expect(await titles(`dateFrom=${today}`)).toHaveLength(4);
    expect(await titles('type=post')).toHaveLength(4);
    expect((await api.get('/v1/contents?sortBy=body')).status).toBe(422);
    expect((await api.get('/v1/contents?status=live')).status).toBe(422);
    expect((await api.get('/v1/contents?limit=101')).status).toBe(422);
  });

  it('keeps meta.total exact through every kind of write (per-status counters, decisions N12)', async () => {
    const { api, siteId } = await site(['en', 'de']);
    const delivery = client(ctx.app, (await createTokenFor(ctx.app, siteId, { kind: 'delivery', scopes: ['contents.view'] })).token);
    const totals = async () => {
      const total = async (c: Client, q = '') => (await c.get(`/v1/contents?${q}`)).body.meta.total;
      return [
        await total(api),
        await total(api, 'status=draft'),
        await total(api, 'status=published'),
        await total(delivery),
        await total(delivery, 'status=draft'),
      ];
    };
    expect(await totals()).toEqual([0, 0, 0, 0, 0]);
    const a = await post(api, { title: 'A' });
    const b = await post(api, { title: 'B', status: 'published' });
    const c = await post(api, { title: 'C' });
    expect(await totals()).toEqual([3, 2, 1, 1, 0]);
    expect((await api.put(`/v1/contents/${a.id}`, { status: 'published' })).status).toBe(200);
    expect((await api.put(`/v1/contents/${a.id}`, { title: 'A2' })).status).toBe(200);
    expect(await totals()).toEqual([3, 1, 2, 2, 0]);
    expect((await api.post('/v1/contents/bulk/archive', { ids: [a.id, b.id] })).body.archived).toBe(2);
    expect(await totals()).toEqual([3, 1, 0, 0, 0]);
    expect((await api.post(`/v1/contents/${c.id}/copy-to-locale`, { targetLocale: 'de' })).status).toBe(200);
    expect((await api.post('/v1/contents/bulk/publish', { ids: [a.id, c.id] })).body.published).toBe(2);
    expect(await totals()).toEqual([4, 1, 2, 2, 0]);
    // A failed bulk request changes nothing, counters included.
    expect((await api.post('/v1/contents/bulk/publish', { ids: Array.from({ length: 51 }, (_, i) => i + 1) })).status).toBe(422);
    expect((await api.delete(`/v1/contents/${a.id}`)).status).toBe(200);
    expect((await api.post('/v1/contents/bulk/delete', { ids: [b.id] })).body.deleted).toBe(1);
    expect(await totals()).toEqual([2, 1, 1, 1, 0]);
    // The counters agree with a real count, and other sites' contents never leak in.
    const other = await site();
    await post(other.api, { title: 'Elsewhere' });
    const counted = await ctx.app.database.db
      .selectFrom('contents')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('site_id', '=', siteId)
      .executeTakeFirstOrThrow();
    expect(Number(counted.n)).toBe(2);
    expect((await api.get('/v1/contents')).body.meta.total).toBe(2);
    expect((await api.get('/v1/contents?locale=de')).body.meta.total).toBe(1);
  });

  it('sorts by title, slug, created_at, updated_at and published_at', async () => {
    const { api } = await site();
    for (const t of ['b', 'c', 'a']) await post(api, { title: t });
    const order = async (q: string) => (await api.get(`/v1/contents?${q}`)).body.data.map((x: any) => x.title);
    expect(await order('sortBy=title&sortOrder=asc')).toEqual(['a', 'b', 'c']);
    expect(await order('sortBy=slug&sortOrder=desc')).toEqual(['c', 'b', 'a']);
    expect(await order('')).toEqual(['a', 'c', 'b']);
    expect(await order('sortBy=created_at&sortOrder=asc')).toEqual(['b', 'c', 'a']);
    // Pages (ids of the page first, then its rows) keep the order across page boundaries.
    for (const q of ['sortBy=title&sortOrder=desc', 'sortBy=created_at&sortOrder=asc', '']) {
      const pages = [];
      for (const page of [1, 2]) pages.push(...(await api.get(`/v1/contents?limit=2&page=${page}&${q}`)).body.data.map((x: any) => x.title));
      expect(pages, q).toEqual(await order(q));
    }
    expect((await api.get('/v1/contents?sortBy=published_at')).status).toBe(200);
    expect((await api.get('/v1/contents?sortBy=updated_at&sortOrder=desc')).status).toBe(200);
  });
});

describe('GET /v1/contents?cursor= (keyset pages, decisions MP1)', () => {
  /** Follows `nextCursor` from the first page; every page's titles and meta. */
  async function walk(api: Client, q: string) {
    const pages: Array<{ titles: string[]; meta: any }> = [];
    let res = await api.get(`/v1/contents?${q}`);
    for (;;) {
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      pages.push({ titles: res.body.data.map((x: any) => x.title), meta: res.body.meta });
      if (res.body.meta.nextCursor === null) return pages;
      res = await api.get(`/v1/contents?${q}&cursor=${encodeURIComponent(res.body.meta.nextCursor)}`);
    }
  }

  it('walks 7 posts 3 a page: 3, 3 and 1, in the offset order, for the default sort and title both ways (ties by id)', async () => {
    const { api } = await site();
    // Two titles twice: the id breaks the tie, in the list's direction.
    for (const t of ['d', 'b', 'g', 'b', 'a', 'g', 'c']) await post(api, { title: t });
    const all = async (q: string) => (await api.get(`/v1/contents?limit=100&${q}`)).body.data.map((x: any) => x.title);
    expect(await all('')).toEqual(['c', 'g', 'a', 'b', 'g', 'b', 'd']);
    expect(await all('sortBy=title')).toEqual(['a', 'b', 'b', 'c', 'd', 'g', 'g']);
    for (const q of ['limit=3', 'limit=3&sortBy=title&sortOrder=asc', 'limit=3&sortBy=title&sortOrder=desc', 'limit=3&sortBy=created_at&sortOrder=asc']) {
      const pages = await walk(api, q);
      expect(
        pages.map((p) => p.titles.length),
        q,
      ).toEqual([3, 3, 1]);
      expect(pages.flatMap((p) => p.titles)).toEqual(await all(q.replace('limit=3', '')));
      // The first page is page 1 by number; the ones read by cursor have no number, the same total.
      expect(pages.map((p) => [p.meta.total, p.meta.perPage, p.meta.currentPage, p.meta.lastPage])).toEqual([
        [7, 3, 1, 3],
        [7, 3, null, 3],
        [7, 3, null, 3],
      ]);
    }
    // An offset page's cursor leads to the next offset page.
    const page2 = await api.get('/v1/contents?limit=3&page=2');
    const next = await api.get(`/v1/contents?limit=3&cursor=${encodeURIComponent(page2.body.meta.nextCursor)}`);
    expect(next.body.data.map((x: any) => x.title)).toEqual(['d']);
    expect(next.body.meta.nextCursor).toBeNull();
    // The last offset page has no next cursor.
    expect((await api.get('/v1/contents?limit=3&page=3')).body.meta.nextCursor).toBeNull();
  });

  it('keeps its filters and visibility, and a write before the cursor does not shift the next page', async () => {
    const { api, siteId } = await site();
    for (const [i, t] of ['p1', 'd1', 'p2', 'p3', 'd2', 'p4', 'p5'].entries())
      await post(api, { title: t, ...(t.startsWith('p') ? { status: 'published' } : {}), excerpt: String(i) });
    const pages = await walk(api, 'limit=2&status=published');
    expect(pages.map((p) => p.titles)).toEqual([['p5', 'p4'], ['p3', 'p2'], ['p1']]);
    const delivery = client(ctx.app, (await createTokenFor(ctx.app, siteId, { kind: 'delivery', scopes: ['contents.view'] })).token);
    expect((await walk(delivery, 'limit=4')).map((p) => p.titles)).toEqual([['p5', 'p4', 'p3', 'p2'], ['p1']]);
    // Page 1 of 2 published, then a new published post: by offset page 2 would repeat p3; by cursor it does not.
    const first = await api.get('/v1/contents?limit=2&status=published');
    await post(api, { title: 'p6', status: 'published' });
    const byCursor = await api.get(`/v1/contents?limit=2&status=published&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`);
    expect(byCursor.body.data.map((x: any) => x.title)).toEqual(['p3', 'p2']);
    expect(byCursor.body.meta.total).toBe(6);
    expect((await api.get('/v1/contents?limit=2&status=published&page=2')).body.data.map((x: any) => x.title)).toEqual(['p4', 'p3']);
  });

  it('refuses a cursor it did not give, one of another sort, and a cursor with a page (422, G3 body); published_at pages have no cursor', async () => {
    const { api } = await site();
    for (const t of ['a', 'b', 'c']) await post(api, { title: t, status: 'published' });
    const cursor = encodeURIComponent((await api.get('/v1/contents?limit=1')).body.meta.nextCursor);
    const forged = Buffer.from(JSON.stringify(['body', 'desc', 'x', 1])).toString('base64url');
    for (const [q, field] of [
      ['cursor=not-a-cursor', 'cursor'],
      [`cursor=${forged}`, 'cursor'],
      [`cursor=${Buffer.from('[1,2,3]').toString('base64url')}`, 'cursor'],
      [`cursor=${cursor}&sortBy=title`, 'cursor'],
      [`cursor=${cursor}&sortOrder=asc`, 'cursor'],
      [`cursor=${cursor}&page=2`, 'page'],
    ] as const) {
      const res = await api.get(`/v1/contents?limit=1&${q}`);
      expect(res.status, q).toBe(422);
      expectErrorShape(res.body, 422, 'VALIDATION_FAILED');
      expect(Object.keys(res.body.errors), q).toEqual([field]);
    }
    // The same sort named explicitly is the cursor's own: accepted.
    expect((await api.get(`/v1/contents?limit=1&sortBy=created_at&sortOrder=desc&cursor=${cursor}`)).body.data.map((x: any) => x.title)).toEqual(['b']);
    const byDate = await api.get('/v1/contents?limit=1&sortBy=published_at');
    expect([byDate.body.meta.total, byDate.body.meta.lastPage, byDate.body.meta.nextCursor]).toEqual([3, 3, null]);
  });
});

describe('GET /v1/contents/:id and /v1/contents/slug/:slug', () => {
  it('answers the bare detail by id and { data } by slug, in the given locale', async () => {
    const { api } = await site(['en', 'de']);
    const c = await post(api, { title: 'Same slug', slug: 'same' });
    const de = await post(api, { title: 'Gleicher Slug', slug: 'same', locale: 'de' });
    const byId = await api.get(`/v1/contents/${c.id}`);
    expect(byId.body).not.toHaveProperty('data');
    expect(byId.body.id).toBe(c.id);
    expect((await api.get('/v1/contents/slug/same')).body.data.id).toBe(c.id);
    expect((await api.get('/v1/contents/slug/same?locale=de')).body.data.id).toBe(de.id);
    expect((await api.get('/v1/contents/slug/nothing')).status).toBe(404);
    expect((await api.get('/v1/contents/999999')).status).toBe(404);
  });

  it('answers the stored body as written, whatever the other fields hold (the body is spliced in unparsed, decisions N11)', async () => {
    const { api } = await site();
    const body = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Ünïcode "quotes" \\ and ,"body":null, inside' }] }] };
    // Titles and excerpts that spell the very key sequence the splice looks for.
    const c = await post(api, { title: 'T ,"body":null, "x"', excerpt: ',"body":null,"bodyHtml":"', slug: 'splice', body, metadata: { body: null } });
    for (const res of [await api.get(`/v1/contents/${c.id}`), await api.get('/v1/contents/slug/splice')]) {
      const detail = res.body.data ?? res.body;
      expect(res.status).toBe(200);
      expect(detail.body).toEqual(body);
      expect(detail).toMatchObject({ title: 'T ,"body":null, "x"', excerpt: ',"body":null,"bodyHtml":"', metadata: { body: null }, bodyHtml: c.bodyHtml });
      expect(detail).not.toHaveProperty('bodyJson');
    }
    const empty = await post(api, { title: 'No body' });
    expect((await api.get(`/v1/contents/${empty.id}`)).body.body).toBeNull();
  });

  it('builds Article and FAQ JSON-LD from structuredData', async () => {
    const { api } = await site();
    const c = await post(api, {
      title: 'Guide',
      excerpt: 'How to',
      status: 'published',
      structuredData: { article: { enabled: true, type: 'BlogPosting' }, faq: [{ question: 'Why?', answer: 'Because.' }] },
    });
    expect(c.jsonLd).toEqual([
      expect.objectContaining({
        '@type': 'BlogPosting',
        headline: 'Guide',
        description: 'How to',
        datePublished: c.publishedAt,
        author: { '@type': 'Person', name: 'Site owner' },
      }),
      {
        '@context': 'https://schema.org',
        '@type': 'FAQPage',
        mainEntity: [{ '@type': 'Question', name: 'Why?', acceptedAnswer: { '@type': 'Answer', text: 'Because.' } }],
      },
    ]);
  });
});

describe('translations of contents', () => {
  it('answers alternates, translation status and a draft copy in the target locale with translated categories', async () => {
    const { api } = await site(['en', 'de', 'fr']);
    const cat = (await api.post('/v1/categories', { name: 'News' })).body.data;
    const catDe = (await api.post(`/v1/categories/${cat.id}/copy-to-locale`, { targetLocale: 'de' })).body.data;
    const en = await post(api, { title: 'Hello', excerpt: 'Hi', bodyMarkdown: 'Body', categoryIds: [cat.id], status: 'published' });
    const copy = await api.post(`/v1/contents/${en.id}/copy-to-locale`, { targetLocale: 'de' });
    expect(copy.status).toBe(200);
    expect(copy.body.data).toMatchObject({
      locale: 'de',
      status: 'draft',
      title: 'Hello',
      slug: en.slug,
      translationGroup: en.translationGroup,
      bodyHtml: '<p>Body</p>',
      categories: [{ id: catDe.id, name: 'News', slug: 'news' }],
    });
    expect((await api.get(`/v1/contents/${en.id}`)).body.alternates).toEqual([{ locale: 'de', id: copy.body.data.id, slug: en.slug }]);
    expect((await api.get(`/v1/contents/${en.id}/translations`)).body.data).toEqual({
      en: { status: 'complete' },
      de: { status: 'partial' },
      fr: { status: 'missing' },
    });
    const again = await api.post(`/v1/contents/${en.id}/copy-to-locale`, { locale: 'de' });
    expect(again.status).toBe(409);
    expectErrorShape(again.body, 409, 'TRANSLATION_EXISTS');
    expect((await api.get(`/v1/contents?translationGroup=${en.translationGroup}`)).body.meta.total).toBe(2);
  });
});

describe('GET /v1/contents/:id with its lists in one statement (issue 15 item 2)', () => {
  it('answers categories and tags in their order and alternates by locale, only published ones to a delivery token, as the answer to a write does', async () => {
    const { api, siteId } = await site(['en', 'de', 'fr', 'it']);
    const cats: any[] = [];
    for (const name of ['Zeta', 'Alpha', 'Mid']) cats.push((await api.post('/v1/categories', { name })).body.data);
    const tags: any[] = [];
    for (const name of ['t3', 't1', 't2']) tags.push((await api.post('/v1/tags', { name })).body.data);
    const en = await post(api, { title: 'Hello', status: 'published', categoryIds: [cats[1].id, cats[0].id, cats[2].id], tagIds: [tags[2].id, tags[0].id] });
    // Members created out of locale order: it, then fr (published), de (draft).
    const member = async (locale: string, status: string) =>
      post(api, { title: `Hello ${locale}`, locale, translationGroup: en.translationGroup, status, categoryIds: [cats[0].id] });
    const it_ = await member('it', 'published');
    const fr = await member('fr', 'published');
    const de = await member('de', 'draft');
    const read = (await api.get(`/v1/contents/${en.id}`)).body;
    expect(read.categories.map((c: any) => c.name)).toEqual(['Alpha', 'Zeta', 'Mid']);
    expect(read.categories[0]).toEqual({ id: cats[1].id, name: 'Alpha', slug: 'alpha' });
    expect(read.tags.map((t: any) => t.id)).toEqual([tags[2].id, tags[0].id]);
    expect(read.alternates).toEqual([
      { locale: 'de', id: de.id, slug: de.slug },
      { locale: 'fr', id: fr.id, slug: fr.slug },
      { locale: 'it', id: it_.id, slug: it_.slug },
    ]);
    expect((await api.get(`/v1/contents/slug/${en.slug}?locale=en`)).body.data).toEqual(read);
    // The answer to a create: its categories and tags in the order sent, from the lookup that checked
    // them; no alternates in a new group; the other members (as they were then) when joining one.
    expect({ categories: en.categories, tags: en.tags, alternates: en.alternates }).toEqual({ categories: read.categories, tags: read.tags, alternates: [] });
    expect(de.alternates).toEqual([
      { locale: 'en', id: en.id, slug: en.slug },
      { locale: 'fr', id: fr.id, slug: fr.slug },
      { locale: 'it', id: it_.id, slug: it_.slug },
    ]);
    expect(de.categories).toEqual([{ id: cats[0].id, name: 'Zeta', slug: 'zeta' }]);
    // The answer to a write looks its lists up: the same lists.
    const updated = (await api.put(`/v1/contents/${en.id}`, { excerpt: 'Changed' })).body.data;
    expect({ categories: updated.categories, tags: updated.tags, alternates: updated.alternates }).toEqual({
      categories: read.categories,
      tags: read.tags,
      alternates: read.alternates,
    });
    const delivery = client(ctx.app, (await createTokenFor(ctx.app, siteId, { kind: 'delivery', scopes: 'all' })).token);
    expect((await delivery.get(`/v1/contents/${en.id}`)).body.alternates.map((a: any) => a.locale)).toEqual(['fr', 'it']);
    // No lists: empty arrays, not null.
    const bare = await post(api, { title: 'Alone' });
    expect((await api.get(`/v1/contents/${bare.id}`)).body).toMatchObject({ categories: [], tags: [], alternates: [] });
  });
});

describe('delivery tokens and .own scopes (decisions G12, G13)', () => {
  it('show a delivery token only published contents: others are 404 and left out of lists', async () => {
    const { api, siteId } = await site();
    const pub = await post(api, { status: 'published', title: 'Public' });
    const draft = await post(api, { title: 'Draft' });
    const sched = await post(api, { status: 'scheduled', scheduledAt: future() });
    const arch = await post(api, { status: 'archived' });
    const delivery = client(ctx.app, (await createTokenFor(ctx.app, siteId, { kind: 'delivery', scopes: 'all' })).token);
    expect((await delivery.get(`/v1/contents/${pub.id}`)).status).toBe(200);
    for (const c of [draft, sched, arch]) expect((await delivery.get(`/v1/contents/${c.id}`)).status).toBe(404);
    expect((await delivery.get(`/v1/contents/slug/${draft.slug}`)).status).toBe(404);
    const list = await delivery.get('/v1/contents');
    expect(list.body.data.map((c: any) => c.id)).toEqual([pub.id]);
    expect((await delivery.post('/v1/contents', { type: 'post', title: 'x' })).status).toBe(403);
  });

  it("limit a .own token to its user's contents", async () => {
    const { api, siteId } = await site();
    const others = await post(api, { title: 'Owner post' });
    const writer = await createTokenFor(ctx.app, siteId, {
      newUser: 'Writer',
      scopes: ['contents.view.own', 'contents.create', 'contents.update.own', 'contents.delete.own', 'contents.publish.own'],
    });
    const w = client(ctx.app, writer.token);
    const mine = await post(w, { title: 'Mine' });
    expect((await w.get('/v1/contents')).body.data.map((c: any) => c.id)).toEqual([mine.id]);
    expect((await w.get(`/v1/contents/${others.id}`)).status).toBe(404);
    expect((await w.put(`/v1/contents/${others.id}`, { title: 'Hijacked' })).status).toBe(404);
    expect((await w.put(`/v1/contents/${mine.id}`, { status: 'published' })).status).toBe(200);
    expect((await w.post('/v1/contents/bulk/delete', { ids: [others.id, mine.id] })).body).toEqual({ deleted: 1 });
    expect((await api.get(`/v1/contents/${others.id}`)).body.title).toBe('Owner post');
  });
});

describe('categories and tags stay true to the contents', () => {
  it("counts linked contents, lists a category's contents, and deleting a category or tag removes only the link", async () => {
    const { api } = await site();
    const cat = (await api.post('/v1/categories', { name: 'News' })).body.data;
    const tag = (await api.post('/v1/tags', { name: 'Hot' })).body.data;
    const a = await post(api, { title: 'A', categoryIds: [cat.id], tagIds: [tag.id] });
    await post(api, { title: 'B', categoryIds: [cat.id] });
    expect((await api.get(`/v1/categories/${cat.id}`)).body).toMatchObject({ contentCount: 2, contents: { meta: { total: 2 } } });
    expect((await api.get(`/v1/categories/${cat.id}?limit=1`)).body.contents.data).toEqual([
      { id: expect.any(Number), title: 'B', slug: 'b', status: 'draft' },
    ]);
    expect((await api.get('/v1/categories/tree')).body.data[0].contentCount).toBe(2);
    expect((await api.get(`/v1/tags/${tag.id}`)).body.data.contentCount).toBe(1);
    expect((await api.get('/v1/tags')).body.data[0].contentCount).toBe(1);
    await api.delete(`/v1/categories/${cat.id}`);
    await api.delete(`/v1/tags/${tag.id}`);
    const after = (await api.get(`/v1/contents/${a.id}`)).body;
    expect(after.categories).toEqual([]);
    expect(after.tags).toEqual([]);
  });
});

describe("each content's categories and tags kept on its row (migration 0048, decisions PF11)", () => {
  /** Every content's kept lists of a site, against what its link rows say now (the truth). */
  async function keptAndLive(siteId: string) {
    const db = ctx.app.database.db;
    const rows = await db.selectFrom('contents').select(['id', 'categories_list', 'tags_list']).where('site_id', '=', siteId).orderBy('id').execute();
    const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
    const live = async (table: 'content_categories' | 'content_tags', ref: 'categories' | 'tags', column: 'category_id' | 'tag_id', id: number) =>
      (
        await db
          .selectFrom(`${table} as x` as 'content_categories as x')
          .innerJoin(`${ref} as k` as 'categories as k', 'k.id', `x.${column}` as 'x.category_id')
          .select(['k.id', 'k.name', 'k.slug'])
          .where('x.content_id', '=', id)
          .orderBy('x.position')
          .execute()
      ).map((r) => ({ id: Number(r.id), name: r.name, slug: r.slug }));
    const kept: unknown[] = [];
    const truth: unknown[] = [];
    for (const r of rows) {
      kept.push({ id: r.id, categories: parse(r.categories_list), tags: parse(r.tags_list) });
      truth.push({
        id: r.id,
        categories: await live('content_categories', 'categories', 'category_id', Number(r.id)),
        tags: await live('content_tags', 'tags', 'tag_id', Number(r.id)),
      });
    }
    return { kept, truth };
  }

  it("shows a category's or tag's new name and slug on every content linking it, in every read, and nothing changes on another site", async () => {
    const { api, siteId } = await site();
    const other = await site();
    const [news, tech] = [(await api.post('/v1/categories', { name: 'News' })).body.data, (await api.post('/v1/categories', { name: 'Tech' })).body.data];
    const [hot, cold] = [(await api.post('/v1/tags', { name: 'Hot' })).body.data, (await api.post('/v1/tags', { name: 'Cold' })).body.data];
    const otherNews = (await other.api.post('/v1/categories', { name: 'News' })).body.data;
    const a = await post(api, { title: 'Alpha word', categoryIds: [tech.id, news.id], tagIds: [hot.id, cold.id], status: 'published' });
    await post(api, { title: 'Beta', categoryIds: [news.id] });
    const c = await post(other.api, { title: 'Gamma', categoryIds: [otherNews.id] });

    expect((await api.put(`/v1/categories/${news.id}`, { name: 'World news', slug: 'world' })).status).toBe(200);
    expect((await api.put(`/v1/tags/${cold.id}`, { name: 'Frozen' })).status).toBe(200);
    const renamed = [
      { id: tech.id, name: 'Tech', slug: 'tech' },
      { id: news.id, name: 'World news', slug: 'world' },
    ];
    const tags = [
      { id: hot.id, name: 'Hot', slug: 'hot' },
      { id: cold.id, name: 'Frozen', slug: 'cold' },
    ];
    expect((await api.get(`/v1/contents/${a.id}`)).body).toMatchObject({ categories: renamed, tags });
    expect((await api.get(`/v1/contents/slug/${a.slug}`)).body.data).toMatchObject({ categories: renamed, tags });
    const list = (await api.get('/v1/contents?sortBy=title&sortOrder=asc')).body.data;
    expect(list.map((x: any) => [x.title, x.categories.map((k: any) => k.name), x.tags.map((t: any) => t.name)])).toEqual([
      ['Alpha word', ['Tech', 'World news'], ['Hot', 'Frozen']],
      ['Beta', ['World news'], []],
    ]);
    expect((await api.get('/v1/contents/search?q=alpha')).body.data[0]).toMatchObject({ categories: renamed, tags });
    expect((await other.api.get(`/v1/contents/${c.id}`)).body.categories).toEqual([{ id: otherNews.id, name: 'News', slug: 'news' }]);

    // A new order is kept in the new order; a restore brings the first revision's links back.
    await api.put(`/v1/contents/${a.id}`, { categoryIds: [news.id], tagIds: [cold.id, hot.id] });
    expect((await api.get(`/v1/contents/${a.id}`)).body).toMatchObject({ categories: [renamed[1]], tags: [tags[1], tags[0]] });
    const first = (await api.get(`/v1/contents/${a.id}/revisions`)).body.data.at(-1);
    const restored = (await api.post(`/v1/contents/${a.id}/revisions/${first.id}/restore`)).body.data;
    expect(restored).toMatchObject({ categories: renamed, tags });
    expect((await api.get(`/v1/contents/${a.id}`)).body).toMatchObject({ categories: renamed, tags });

    for (const id of [siteId, other.siteId]) {
      const { kept, truth } = await keptAndLive(id);
      expect(kept).toEqual(truth);
    }
  });

  it('are rebuilt from the link rows by the migration, for contents written before it', async () => {
    const { api, siteId } = await site();
    const news = (await api.post('/v1/categories', { name: 'News' })).body.data;
    const hot = (await api.post('/v1/tags', { name: 'Hot' })).body.data;
    const a = await post(api, { title: 'A', categoryIds: [news.id], tagIds: [hot.id] });
    await post(api, { title: 'B' });
    const db = ctx.app.database.db;
    const dialect = TEST_DIALECT;
    await m0048.down(db, dialect);
    await m0048.up(db, dialect);
    const { kept, truth } = await keptAndLive(siteId);
    expect(kept).toEqual(truth);
    expect(kept[0]).toEqual({ id: a.id, categories: [{ id: news.id, name: 'News', slug: 'news' }], tags: [{ id: hot.id, name: 'Hot', slug: 'hot' }] });
    expect(kept[1]).toMatchObject({ categories: [], tags: [] });
    // The triggers are back: a rename reaches the row again.
    await api.put(`/v1/tags/${hot.id}`, { name: 'Hotter' });
    expect((await api.get(`/v1/contents/${a.id}`)).body.tags).toEqual([{ id: hot.id, name: 'Hotter', slug: 'hot' }]);
  });
});

describe('GET /v1/contents/search', () => {
  it('ranks title above body, highlights with <mark>, honours list filters and answers the list shape', async () => {
    const { api, siteId } = await site();
    const inBody = await post(api, { title: 'Weekly notes', bodyMarkdown: 'We tried a new espresso machine today.', status: 'published' });
    const inTitle = await post(api, { title: 'Espresso <basics> & more', bodyMarkdown: 'Grind, tamp, pull.', status: 'published' });
    await post(api, { title: 'Espresso draft', bodyMarkdown: 'Unpublished.' });
    const res = await api.get('/v1/contents/search?q=espresso&status=published');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ total: 2, perPage: 15, currentPage: 1, lastPage: 1, capped: false });
    expect(res.body.data.map((c: any) => c.id)).toEqual([inTitle.id, inBody.id]);
    expect(res.body.data[0].highlights.title).toBe('<mark>Espresso</mark> &lt;basics&gt; &amp; more');
    expect(res.body.data[1].highlights.body).toContain('<mark>espresso</mark>');
    expect(res.body.data[0]).toMatchObject({ categories: [], tags: [], author: { fullName: 'Site owner' } });
    expect(res.body.data[0]).not.toHaveProperty('bodyHtml');
    const delivery = client(ctx.app, (await createTokenFor(ctx.app, siteId, { kind: 'delivery', scopes: 'all' })).token);
    expect((await delivery.get('/v1/contents/search?q=espresso')).body.meta.total).toBe(2);
    expect((await api.get('/v1/contents/search?q=espresso')).body.meta.total).toBe(3);
  });

  it('treats any text as words and never fails on it', async () => {
    const { api } = await site();
    await post(api, { title: 'Multi-agent systems', status: 'published' });
    expect((await api.get('/v1/contents/search?q=multi-agent')).body.meta.total).toBe(1);
    for (const q of ['"', "it's", 'AND', 'OR NOT', '*', '(', 'NEAR(a b)', ':', '😀', 'a\\b', '%_']) {
      const res = await api.get(`/v1/contents/search?q=${encodeURIComponent(q)}`);
      expect(res.status, q).toBe(200);
      expect(res.body).toMatchObject({ data: expect.any(Array), meta: expect.any(Object) });
    }
    expect((await api.get('/v1/contents/search')).status).toBe(422);
  });

  it('is not counted as a request the reader thread yields to, so a flood of searches is not paced behind itself (decisions HN20)', async () => {
    const { api } = await site();
    await post(api, { title: 'Paced espresso', status: 'published' });
    const before = lastArrivalAt();
    expect((await api.get('/v1/contents/search?q=espresso')).status).toBe(200);
    expect(lastArrivalAt()).toBe(before);
    // Any other request is.
    expect((await api.get('/v1/contents?limit=1')).status).toBe(200);
    expect(lastArrivalAt()).toBeGreaterThan(before);
    // And a request no route answers.
    const listed = lastArrivalAt();
    expect((await api.get('/v1/no-such-route')).status).toBe(404);
    expect(lastArrivalAt()).toBeGreaterThan(listed);
  });
});
