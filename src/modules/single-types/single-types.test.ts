import { describe, expect, it } from 'vitest';
import { expectErrorShape, expect422, ISO_TIMESTAMP } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';

const ctx = useTestApp();
const site = ctx.site;

const ISO = ISO_TIMESTAMP;

const SCHEMA = [
  { name: 'title', type: 'string', required: true, maxLength: 20 },
  { name: 'count', type: 'number' },
  { name: 'layout', type: 'select', options: ['wide', 'narrow'] },
];

describe('POST /v1/single-types', () => {
  it('creates a single type (201) with every field, and GET returns exactly the same', async () => {
    const api = await site();
    const res = await api.post('/v1/single-types', {
      slug: 'about',
      name: 'About us',
      description: 'Who we are',
      data: { title: 'Hello', count: 3, layout: 'wide', extra: { a: [1, 2] } },
      schema: SCHEMA,
      meta: { metaTitle: 'About | Cairn', metaDescription: 'All about us' },
    });
    expect(res.status).toBe(201);
    const expected = {
      slug: 'about',
      name: 'About us',
      description: 'Who we are',
      locale: 'en',
      data: { title: 'Hello', count: 3, layout: 'wide', extra: { a: [1, 2] } },
      schema: [
        { name: 'title', type: 'string', required: true, maxLength: 20 },
        { name: 'count', type: 'number' },
        { name: 'layout', type: 'select', options: [{ value: 'wide' }, { value: 'narrow' }] },
      ],
      body: null,
      bodyHtml: '',
      meta: { metaTitle: 'About | Cairn', metaDescription: 'All about us' },
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    };
    expect(res.body).toEqual({ data: expected });
    expect(res.body.data.updatedAt).toBe(res.body.data.createdAt);
    const got = await api.get('/v1/single-types/about');
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ data: { ...expected, createdAt: res.body.data.createdAt, updatedAt: res.body.data.updatedAt } });
  });

  it('fills in defaults for a minimal single type: description, schema, body and meta null, bodyHtml empty', async () => {
    const api = await site();
    const res = await api.post('/v1/single-types', { slug: 'imprint', name: '  Imprint  ', data: {} });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      slug: 'imprint',
      name: 'Imprint',
      description: null,
      locale: 'en',
      data: {},
      schema: null,
      body: null,
      bodyHtml: '',
      meta: { metaTitle: null, metaDescription: null },
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
  });

  it('requires data unless body or bodyMarkdown is given, then defaults it to {}', async () => {
    const api = await site();
    const missing = await api.post('/v1/single-types', { slug: 'a', name: 'A' });
    expect422(missing, 'VALIDATION_FAILED', ['data']);
    expect(missing.body.errors.data).toEqual(['is required unless body or bodyMarkdown is given']);
    expect422(await api.post('/v1/single-types', { slug: 'a', name: 'A', body: null }), 'VALIDATION_FAILED', ['data']);
    expect422(await api.post('/v1/single-types', { slug: 'a', name: 'A', bodyMarkdown: null }), 'VALIDATION_FAILED', ['data']);
    for (const data of [[], 'text', 3, null]) {
      expect422(await api.post('/v1/single-types', { slug: 'a', name: 'A', data }), 'VALIDATION_FAILED', ['data']);
    }
    const md = await api.post('/v1/single-types', { slug: 'md', name: 'Markdown', bodyMarkdown: 'Hello' });
    expect(md.status).toBe(201);
    expect(md.body.data.data).toEqual({});
    expect(md.body.data.bodyHtml).toBe('<p>Hello</p>');
    const json = await api.post('/v1/single-types', {
      slug: 'json',
      name: 'JSON',
      body: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Hi' }] }] },
    });
    expect(json.status).toBe(201);
    expect(json.body.data.data).toEqual({});
    expect(json.body.data.bodyHtml).toBe('<p>Hi</p>');
    expect((await api.get('/v1/single-types')).body.meta.total).toBe(2);
  });

  it('holds the slug at 1-100 characters of lower-case letters, digits and hyphens, and requires it', async () => {
    const api = await site();
    const ok = await api.post('/v1/single-types', { slug: 's'.repeat(100), name: 'Long', data: {} });
    expect(ok.status).toBe(201);
    expect(ok.body.data.slug).toBe('s'.repeat(100));
    expect((await api.get(`/v1/single-types/${'s'.repeat(100)}`)).status).toBe(200);
    for (const slug of ['s'.repeat(101), '', 'Not A Slug', 'trailing-', 'ümlaut', undefined]) {
      const res = await api.post('/v1/single-types', { slug, name: 'X', data: {} });
      expect422(res, 'VALIDATION_FAILED', ['slug']);
    }
    expect((await api.get('/v1/single-types')).body.meta.total).toBe(1);
  });

  it('holds name at 1-255, description at 1000, metaTitle at 255 and metaDescription at 500', async () => {
    const api = await site();
    const ok = await api.post('/v1/single-types', {
      slug: 'max',
      name: 'n'.repeat(255),
      description: 'd'.repeat(1000),
      data: {},
      meta: { metaTitle: 't'.repeat(255), metaDescription: 'm'.repeat(500) },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data).toMatchObject({
      name: 'n'.repeat(255),
      description: 'd'.repeat(1000),
      meta: { metaTitle: 't'.repeat(255), metaDescription: 'm'.repeat(500) },
    });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ name: '' }, 'name'],
      [{ name: undefined }, 'name'],
      [{ description: 'd'.repeat(1001) }, 'description'],
      [{ meta: { metaTitle: 't'.repeat(256) } }, 'meta.metaTitle'],
      [{ meta: { metaDescription: 'm'.repeat(501) } }, 'meta.metaDescription'],
      [{ locale: 'x' }, 'locale'],
    ];
    for (const [patch, field] of cases) {
      const res = await api.post('/v1/single-types', { slug: 'other', name: 'Other', data: {}, ...patch });
      expect422(res, 'VALIDATION_FAILED', [field]);
    }
    const blank = await api.post('/v1/single-types', { slug: 'other', name: '   ', data: {} });
    expect422(blank, 'VALIDATION_FAILED', ['name']);
    expect((await api.get('/v1/single-types')).body.meta.total).toBe(1);
  });

  it('refuses a slug already used in the locale (422 SLUG_TAKEN) and allows it in another enabled locale', async () => {
    const api = await site(['en', 'de']);
    expect((await api.post('/v1/single-types', { slug: 'about', name: 'About', data: {} })).status).toBe(201);
    const dup = await api.post('/v1/single-types', { slug: 'about', name: 'About again', data: {} });
    expect422(dup, 'SLUG_TAKEN', ['slug']);
    expect(dup.body.errors.slug).toEqual(['The slug "about" is already used in en.']);
    const de = await api.post('/v1/single-types', { slug: 'about', name: 'Über uns', data: {}, locale: 'de' });
    expect(de.status).toBe(201);
    expect(de.body.data).toMatchObject({ slug: 'about', name: 'Über uns', locale: 'de' });
    const off = await api.post('/v1/single-types', { slug: 'about', name: 'À propos', data: {}, locale: 'fr' });
    expect422(off, 'LOCALE_NOT_ENABLED', ['locale']);
    const bad = await api.post('/v1/single-types', { slug: 'about', name: 'Bad', data: {}, locale: 'xx_!!' });
    expect422(bad, 'LOCALE_INVALID', ['locale']);
    expect((await api.get('/v1/single-types')).body.meta.total).toBe(2);
  });

  it('refuses an invalid field schema with 422 SCHEMA_INVALID naming the definition', async () => {
    const api = await site();
    const res = await api.post('/v1/single-types', {
      slug: 'a',
      name: 'A',
      data: {},
      schema: [
        { name: 'title', type: 'string' },
        { name: 'x', type: 'nope' },
      ],
    });
    expect422(res, 'SCHEMA_INVALID', ['schema[1].type']);
    const nested = await api.post('/v1/single-types', {
      slug: 'a',
      name: 'A',
      data: {},
      schema: [{ name: 'hero', type: 'object', fields: [{ name: '1bad', type: 'string' }] }],
    });
    expect422(nested, 'SCHEMA_INVALID', ['schema[0].fields[0].name']);
    expect((await api.get('/v1/single-types')).body.meta.total).toBe(0);
  });

  it('accepts the schema as { fields: [...] } and stores it as the list of definitions', async () => {
    const api = await site();
    const res = await api.post('/v1/single-types', { slug: 'a', name: 'A', data: { title: 'T' }, schema: { fields: [{ name: 'title', type: 'string' }] } });
    expect(res.status).toBe(201);
    expect(res.body.data.schema).toEqual([{ name: 'title', type: 'string' }]);
  });

  it('validates data against the schema: 422 DATA_INVALID naming each field', async () => {
    const api = await site();
    const missing = await api.post('/v1/single-types', { slug: 'a', name: 'A', data: { count: 1 }, schema: SCHEMA });
    expect422(missing, 'DATA_INVALID', ['data.title']);
    expect(missing.body.errors['data.title']).toEqual(['is required']);
    const wrong = await api.post('/v1/single-types', { slug: 'a', name: 'A', data: { title: 't'.repeat(21), count: 'three', layout: 'tall' }, schema: SCHEMA });
    expect422(wrong, 'DATA_INVALID', ['data.title', 'data.count', 'data.layout']);
    // A body does not excuse the data from a schema's required fields.
    const viaBody = await api.post('/v1/single-types', { slug: 'a', name: 'A', bodyMarkdown: 'x', schema: SCHEMA });
    expect422(viaBody, 'DATA_INVALID', ['data.title']);
    expect((await api.get('/v1/single-types')).body.meta.total).toBe(0);
  });
});

describe('rich-text body', () => {
  const MARKDOWN = [
    '# About us',
    '',
    '## Team',
    '',
    '- *Ada* and **Linus**',
    '- `npm test`',
    '',
    '1. one',
    '2. two',
    '',
    'See [our site](https://example.com/about) or [this](javascript:alert(1)).',
    '',
    '| Name | Role |',
    '|---|---|',
    '| Ada | Dev |',
    '',
    '<script>alert(1)</script>',
    '',
    '<img src="x" onerror="alert(1)">',
    '',
  ].join('\n');
  const HTML =
    '<h1>About us</h1><h2>Team</h2><ul><li><p><em>Ada</em> and <strong>Linus</strong></p></li><li><p><code>npm test</code></p></li></ul>' +
    '<ol><li><p>one</p></li><li><p>two</p></li></ol><p>See <a href="https://example.com/about">our site</a> or this.</p>' +
    '<table><thead><tr><th><p>Name</p></th><th><p>Role</p></th></tr></thead><tbody><tr><td><p>Ada</p></td><td><p>Dev</p></td></tr></tbody></table>' +
    '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p><p>&lt;img src="x" onerror="alert(1)"&gt;</p>';

  function expectHarmless(html: string): void {
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<[^>]*\son[a-z]+\s*=/i); // no event-handler attribute on any tag
    expect(html).not.toMatch(/javascript:/i);
  }

  it('converts bodyMarkdown to a stored document and sanitized bodyHtml (headings, lists, links, emphasis, code, table)', async () => {
    const api = await site();
    const res = await api.post('/v1/single-types', { slug: 'about', name: 'About', bodyMarkdown: MARKDOWN });
    expect(res.status).toBe(201);
    expect(res.body.data.bodyHtml).toBe(HTML);
    expectHarmless(res.body.data.bodyHtml);
    const body = res.body.data.body;
    expect(body.type).toBe('doc');
    expect(body.content.map((n: any) => n.type)).toEqual(['heading', 'heading', 'bulletList', 'orderedList', 'paragraph', 'table', 'paragraph', 'paragraph']);
    expect(body.content[0]).toEqual({ type: 'heading', attrs: { level: 1 }, content: [{ type: 'text', text: 'About us' }] });
    expect(JSON.stringify(body)).not.toContain('javascript:');
    const got = await api.get('/v1/single-types/about');
    expect(got.body.data.bodyHtml).toBe(HTML);
    expect(got.body.data.body).toEqual(body);
  });

  it('accepts a body as document JSON, drops unsafe URLs and attributes, and renders it', async () => {
    const api = await site();
    const doc = {
      type: 'doc',
      content: [
        { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Hello' }] },
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'bold', marks: [{ type: 'bold' }] },
            { type: 'text', text: ' and ' },
            { type: 'text', text: 'link', marks: [{ type: 'link', attrs: { href: 'https://example.com' } }] },
            { type: 'text', text: ' and ' },
            { type: 'text', text: 'bad', marks: [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }] },
          ],
        },
        { type: 'image', attrs: { src: 'https://example.com/a.png', onerror: 'alert(1)' } },
        { type: 'paragraph', content: [{ type: 'text', text: '<script>alert(1)</script>' }] },
      ],
    };
    const res = await api.post('/v1/single-types', { slug: 'doc', name: 'Doc', body: doc });
    expect(res.status).toBe(201);
    expect(res.body.data.bodyHtml).toBe(
      '<h2>Hello</h2><p><strong>bold</strong> and <a href="https://example.com">link</a> and bad</p>' +
        '<img src="https://example.com/a.png" /><p>&lt;script&gt;alert(1)&lt;/script&gt;</p>',
    );
    expectHarmless(res.body.data.bodyHtml);
    expect(res.body.data.body.content[1].content[3]).toEqual({ type: 'text', text: ' and bad' });
    expect(res.body.data.body.content[2]).toEqual({ type: 'image', attrs: { src: 'https://example.com/a.png', alt: null, title: null } });
  });

  it('refuses a body that is not a valid document with 422 BODY_INVALID, and both body and bodyMarkdown', async () => {
    const api = await site();
    expect422(await api.post('/v1/single-types', { slug: 'a', name: 'A', body: { type: 'nope' } }), 'BODY_INVALID', ['body.type']);
    expect422(await api.post('/v1/single-types', { slug: 'a', name: 'A', body: { type: 'doc', content: [{ type: 'script' }] } }), 'BODY_INVALID', [
      'body.content[0].type',
    ]);
    expect422(await api.post('/v1/single-types', { slug: 'a', name: 'A', data: {}, body: '<p>html</p>' }), 'BODY_INVALID', ['body']);
    expect422(await api.post('/v1/single-types', { slug: 'a', name: 'A', data: {}, body: [] }), 'BODY_INVALID', ['body']);
    const both = await api.post('/v1/single-types', { slug: 'a', name: 'A', body: { type: 'doc', content: [] }, bodyMarkdown: 'x' });
    expect422(both, 'BODY_INVALID', ['body']);
    expect422(await api.post('/v1/single-types', { slug: 'a', name: 'A', bodyMarkdown: 42 }), 'VALIDATION_FAILED', ['bodyMarkdown']);
    expect((await api.get('/v1/single-types')).body.meta.total).toBe(0);
  });

  it('serves the stored HTML on read and never renders it again', async () => {
    const api = await site();
    await api.post('/v1/single-types', { slug: 'stored', name: 'Stored', bodyMarkdown: 'Original' });
    await ctx.app.database.db.updateTable('single_types').set({ body_html: '<p>as stored</p>' }).where('slug', '=', 'stored').execute();
    expect((await api.get('/v1/single-types/stored')).body.data.bodyHtml).toBe('<p>as stored</p>');
  });
});

describe('GET /v1/single-types', () => {
  async function seeded() {
    const api = await site(['en', 'de']);
    for (const [slug, name] of [
      ['alpha', 'Alpha page'],
      ['bravo', 'Bravo page'],
      ['charlie', 'Charlie page'],
      ['delta', 'Delta page'],
      ['echo', 'Echo page'],
    ]) {
      expect((await api.post('/v1/single-types', { slug, name, data: { secret: 1 } })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 3));
    }
    expect((await api.post('/v1/single-types', { slug: 'deutsch', name: 'Deutsche Seite', data: {}, locale: 'de' })).status).toBe(201);
    return api;
  }

  it('lists exactly { slug, name, locale, createdAt, updatedAt }, newest first, with page meta', async () => {
    const api = await seeded();
    const res = await api.get('/v1/single-types?limit=2&page=2');
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ total: 6, perPage: 2, currentPage: 2, lastPage: 3 });
    expect(res.body.data).toEqual([
      { slug: 'delta', name: 'Delta page', locale: 'en', createdAt: expect.stringMatching(ISO), updatedAt: expect.stringMatching(ISO) },
      { slug: 'charlie', name: 'Charlie page', locale: 'en', createdAt: expect.stringMatching(ISO), updatedAt: expect.stringMatching(ISO) },
    ]);
    for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(['createdAt', 'locale', 'name', 'slug', 'updatedAt']);
    const first = await api.get('/v1/single-types?limit=2');
    expect(first.body.data.map((s: any) => s.slug)).toEqual(['deutsch', 'echo']);
    const beyond = await api.get('/v1/single-types?limit=2&page=9');
    expect(beyond.body).toEqual({ data: [], meta: { total: 6, perPage: 2, currentPage: 9, lastPage: 3 } });
  });

  it('defaults to 15 per page and holds limit to 1-100 with 422 outside', async () => {
    const api = await seeded();
    expect((await api.get('/v1/single-types')).body.meta).toEqual({ total: 6, perPage: 15, currentPage: 1, lastPage: 1 });
    expect((await api.get('/v1/single-types?limit=100')).status).toBe(200);
    expect((await api.get('/v1/single-types?limit=1')).body.data.length).toBe(1);
    for (const q of ['limit=101', 'limit=0', 'page=0', 'limit=abc']) {
      const res = await api.get(`/v1/single-types?${q}`);
      expect(res.status, q).toBe(422);
      expectErrorShape(res.body, 422, 'VALIDATION_FAILED');
    }
  });

  it('sorts by name, slug, created_at and updated_at, and refuses other fields', async () => {
    const api = await seeded();
    const slugs = async (q: string) => (await api.get(`/v1/single-types?${q}`)).body.data.map((s: any) => s.slug);
    expect(await slugs('sortBy=name&sortOrder=asc')).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'deutsch', 'echo']);
    expect(await slugs('sortBy=slug&sortOrder=desc')).toEqual(['echo', 'deutsch', 'delta', 'charlie', 'bravo', 'alpha']);
    expect(await slugs('sortBy=created_at&sortOrder=asc')).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo', 'deutsch']);
    await new Promise((r) => setTimeout(r, 3));
    expect((await api.put('/v1/single-types/bravo', { name: 'Bravo page 2' })).status).toBe(200);
    expect((await slugs('sortBy=updated_at&sortOrder=desc'))[0]).toBe('bravo');
    expect422(await api.get('/v1/single-types?sortBy=data'), 'VALIDATION_FAILED', ['sortBy']);
    expect422(await api.get('/v1/single-types?sortOrder=sideways'), 'VALIDATION_FAILED', ['sortOrder']);
  });

  it('filters by search (name or slug, case-insensitive, literal), locale and creation dates', async () => {
    const api = await seeded();
    const slugs = async (q: string) => (await api.get(`/v1/single-types?${q}&sortBy=slug&sortOrder=asc`)).body.data.map((s: any) => s.slug);
    expect(await slugs('search=CHARLIE')).toEqual(['charlie']);
    expect(await slugs('search=seite')).toEqual(['deutsch']);
    expect(await slugs('search=ech')).toEqual(['echo']);
    expect(await slugs('search=page')).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
    expect(await slugs('search=%25')).toEqual([]);
    expect(await slugs('search=secret')).toEqual([]);
    expect(await slugs('locale=de')).toEqual(['deutsch']);
    expect((await slugs('locale=en')).length).toBe(5);
    expect(await slugs('dateFrom=2000-01-01&dateTo=2000-12-31')).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await slugs(`dateFrom=${today}&dateTo=${today}`)).length).toBe(6);
    expect422(await api.get('/v1/single-types?dateFrom=yesterday'), 'VALIDATION_FAILED', ['dateFrom']);
  });

  it("never lists another site's single types", async () => {
    const api = await seeded();
    const other = await site();
    await other.post('/v1/single-types', { slug: 'alpha', name: 'Alpha', data: {} });
    expect((await other.get('/v1/single-types')).body.meta.total).toBe(1);
    expect((await api.get('/v1/single-types')).body.meta.total).toBe(6);
  });
});

describe('GET /v1/single-types/:slug', () => {
  it("picks the locale from the query (default: the site's default locale) and answers 404 where it does not exist", async () => {
    const api = await site(['en', 'de', 'fr']);
    await api.post('/v1/single-types', { slug: 'about', name: 'About', data: { lang: 'en' } });
    await api.post('/v1/single-types', { slug: 'about', name: 'Über uns', data: { lang: 'de' }, locale: 'de' });
    expect((await api.get('/v1/single-types/about')).body.data).toMatchObject({ name: 'About', locale: 'en', data: { lang: 'en' } });
    expect((await api.get('/v1/single-types/about?locale=de')).body.data).toMatchObject({ name: 'Über uns', locale: 'de', data: { lang: 'de' } });
    expect((await api.get('/v1/single-types/about?locale=en')).body.data.name).toBe('About');
    const fr = await api.get('/v1/single-types/about?locale=fr');
    expect(fr.status).toBe(404);
    expectErrorShape(fr.body, 404, 'NOT_FOUND');
    expect((await api.get('/v1/single-types/about?locale=it')).status).toBe(404);
    expect422(await api.get('/v1/single-types/about?locale=xx_!!'), 'LOCALE_INVALID', ['locale']);
  });

  it("answers 404 for an unknown slug or another site's single type, and 422 for a slug over 100 characters", async () => {
    const api = await site();
    const other = await site();
    await other.post('/v1/single-types', { slug: 'theirs', name: 'Theirs', data: {} });
    const res = await api.get('/v1/single-types/unknown');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', code: 'NOT_FOUND', message: 'The single type was not found.' });
    expect((await api.get('/v1/single-types/theirs')).status).toBe(404);
    // Over 100 characters is refused before any lookup: a 422 on the slug parameter, or the
    // router's 414 while its maxParamLength (default 100) is not raised.
    const long = await api.get(`/v1/single-types/${'s'.repeat(101)}`);
    expect([414, 422]).toContain(long.status);
    if (long.status === 422) expect422(long, 'VALIDATION_FAILED', ['slug']);
  });
});

describe('PUT /v1/single-types/:slug', () => {
  it('updates only the fields sent and keeps the rest; meta is merged', async () => {
    const api = await site();
    const created = (
      await api.post('/v1/single-types', {
        slug: 'about',
        name: 'About',
        description: 'Desc',
        data: { title: 'T' },
        schema: [{ name: 'title', type: 'string' }],
        bodyMarkdown: 'Body',
        meta: { metaTitle: 'MT', metaDescription: 'MD' },
      })
    ).body.data;
    await new Promise((r) => setTimeout(r, 5));
    const res = await api.put('/v1/single-types/about', { name: 'About us', meta: { metaDescription: 'New MD' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        ...created,
        name: 'About us',
        meta: { metaTitle: 'MT', metaDescription: 'New MD' },
        updatedAt: expect.stringMatching(ISO),
      },
    });
    expect(res.body.data.updatedAt > created.updatedAt).toBe(true);
    const cleared = await api.put('/v1/single-types/about', { description: null, meta: { metaTitle: null } });
    expect(cleared.body.data).toMatchObject({ description: null, meta: { metaTitle: null, metaDescription: 'New MD' }, bodyHtml: '<p>Body</p>' });
    expect((await api.get('/v1/single-types/about')).body.data).toEqual(cleared.body.data);
  });

  it('keeps the slug permanent: a different slug is a 422 on slug, the same slug is accepted', async () => {
    const api = await site();
    await api.post('/v1/single-types', { slug: 'about', name: 'About', data: {} });
    const res = await api.put('/v1/single-types/about', { slug: 'about-us', name: 'Renamed' });
    expect422(res, 'VALIDATION_FAILED', ['slug']);
    expect(res.body.errors.slug).toEqual(['The slug of a single type cannot change']);
    expect(res.body.message).toBe('The slug of a single type cannot change');
    expect((await api.get('/v1/single-types/about')).body.data.name).toBe('About');
    expect((await api.get('/v1/single-types/about-us')).status).toBe(404);
    const same = await api.put('/v1/single-types/about', { slug: 'about', name: 'Renamed' });
    expect(same.status).toBe(200);
    expect(same.body.data).toMatchObject({ slug: 'about', name: 'Renamed' });
  });

  it('validates new data against the stored schema, and stored data against a new schema', async () => {
    const api = await site();
    await api.post('/v1/single-types', { slug: 'home', name: 'Home', data: { title: 'Hi', count: 1 }, schema: SCHEMA });
    expect422(await api.put('/v1/single-types/home', { data: { count: 2 } }), 'DATA_INVALID', ['data.title']);
    expect422(await api.put('/v1/single-types/home', { schema: [{ name: 'count', type: 'string' }] }), 'DATA_INVALID', ['data.count']);
    expect422(await api.put('/v1/single-types/home', { schema: [{ name: 'count', type: 'nope' }] }), 'SCHEMA_INVALID', ['schema[0].type']);
    expect422(await api.put('/v1/single-types/home', { data: { title: 'ok', count: 'x' }, schema: SCHEMA }), 'DATA_INVALID', ['data.count']);
    const unchanged = (await api.get('/v1/single-types/home')).body.data;
    expect(unchanged.data).toEqual({ title: 'Hi', count: 1 });
    expect(unchanged.schema.map((d: any) => `${d.name}:${d.type}`)).toEqual(['title:string', 'count:number', 'layout:select']);
    const both = await api.put('/v1/single-types/home', { data: { subtitle: 'S' }, schema: [{ name: 'subtitle', type: 'string', required: true }] });
    expect(both.status).toBe(200);
    expect(both.body.data).toMatchObject({ data: { subtitle: 'S' }, schema: [{ name: 'subtitle', type: 'string', required: true }] });
    // Only name changes: the stored data is not re-validated.
    expect((await api.put('/v1/single-types/home', { name: 'Home 2' })).status).toBe(200);
  });

  it('stops validating data once the schema is set to null', async () => {
    const api = await site();
    await api.post('/v1/single-types', { slug: 'home', name: 'Home', data: { title: 'Hi' }, schema: SCHEMA });
    const res = await api.put('/v1/single-types/home', { schema: null, data: { title: 42, anything: [true] } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ schema: null, data: { title: 42, anything: [true] } });
    expect((await api.put('/v1/single-types/home', { data: { count: 'free' } })).body.data.data).toEqual({ count: 'free' });
  });

  it('re-renders the body from bodyMarkdown or body, clears it with body: null, and refuses an invalid one', async () => {
    const api = await site();
    await api.post('/v1/single-types', { slug: 'page', name: 'Page', bodyMarkdown: 'First' });
    const md = await api.put('/v1/single-types/page', { name: 'Page 2', bodyMarkdown: '## Second\n\n[x](javascript:alert(1))' });
    expect(md.status).toBe(200);
    expect(md.body.data.bodyHtml).toBe('<h2>Second</h2><p>x</p>');
    expect(md.body.data.body).toEqual({
      type: 'doc',
      content: [
        { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Second' }] },
        { type: 'paragraph', content: [{ type: 'text', text: 'x' }] },
      ],
    });
    const json = await api.put('/v1/single-types/page', {
      body: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Third' }] }] },
    });
    expect(json.body.data.bodyHtml).toBe('<p>Third</p>');
    expect422(await api.put('/v1/single-types/page', { body: { type: 'doc', content: 'nope' } }), 'BODY_INVALID', ['body.content']);
    expect((await api.get('/v1/single-types/page')).body.data.bodyHtml).toBe('<p>Third</p>');
    const cleared = await api.put('/v1/single-types/page', { body: null });
    expect(cleared.body.data).toMatchObject({ body: null, bodyHtml: '', data: {} });
  });

  it('holds the same limits as create, and refuses an empty body', async () => {
    const api = await site();
    await api.post('/v1/single-types', { slug: 'page', name: 'Page', data: {} });
    expect(
      (
        await api.put('/v1/single-types/page', {
          name: 'n'.repeat(255),
          description: 'd'.repeat(1000),
          meta: { metaTitle: 't'.repeat(255), metaDescription: 'm'.repeat(500) },
        })
      ).status,
    ).toBe(200);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'n'.repeat(256) }, 'name'],
      [{ name: '' }, 'name'],
      [{ description: 'd'.repeat(1001) }, 'description'],
      [{ meta: { metaTitle: 't'.repeat(256) } }, 'meta.metaTitle'],
      [{ meta: { metaDescription: 'm'.repeat(501) } }, 'meta.metaDescription'],
      [{ data: [] }, 'data'],
    ];
    for (const [body, field] of cases) expect422(await api.put('/v1/single-types/page', body), 'VALIDATION_FAILED', [field]);
    expect422(await api.put('/v1/single-types/page', {}), 'VALIDATION_FAILED', ['body']);
  });

  it('updates the single type of the locale in the query only, and answers 404 elsewhere', async () => {
    const api = await site(['en', 'de']);
    await api.post('/v1/single-types', { slug: 'about', name: 'About', data: {} });
    await api.post('/v1/single-types', { slug: 'about', name: 'Über', data: {}, locale: 'de' });
    const res = await api.put('/v1/single-types/about?locale=de', { name: 'Über uns' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ locale: 'de', name: 'Über uns' });
    expect((await api.get('/v1/single-types/about')).body.data.name).toBe('About');
    expect((await api.put('/v1/single-types/about', { name: 'About us' })).body.data.locale).toBe('en');
    expect((await api.get('/v1/single-types/about?locale=de')).body.data.name).toBe('Über uns');
    await api.post('/v1/single-types', { slug: 'only-en', name: 'Only EN', data: {} });
    const missing = await api.put('/v1/single-types/only-en?locale=de', { name: 'X' });
    expect(missing.status).toBe(404);
    expectErrorShape(missing.body, 404, 'NOT_FOUND');
    expect((await api.put('/v1/single-types/unknown', { name: 'X' })).status).toBe(404);
  });
});

describe('DELETE /v1/single-types/:slug', () => {
  it('deletes the single type of the addressed locale only, then answers 404', async () => {
    const api = await site(['en', 'de']);
    await api.post('/v1/single-types', { slug: 'about', name: 'About', data: {} });
    await api.post('/v1/single-types', { slug: 'about', name: 'Über', data: {}, locale: 'de' });
    const del = await api.delete('/v1/single-types/about?locale=de');
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: 'Single type deleted.' });
    expect((await api.get('/v1/single-types/about?locale=de')).status).toBe(404);
    expect((await api.get('/v1/single-types/about')).status).toBe(200);
    expect((await api.delete('/v1/single-types/about?locale=de')).status).toBe(404);
    expect((await api.delete('/v1/single-types/about')).status).toBe(200);
    const gone = await api.delete('/v1/single-types/about');
    expect(gone.status).toBe(404);
    expectErrorShape(gone.body, 404, 'NOT_FOUND');
    expect((await api.get('/v1/single-types')).body.meta.total).toBe(0);
    // The slug is free again once deleted.
    expect((await api.post('/v1/single-types', { slug: 'about', name: 'About again', data: {} })).status).toBe(201);
  });

  it("cannot delete another site's single type", async () => {
    const api = await site();
    const other = await site();
    await other.post('/v1/single-types', { slug: 'theirs', name: 'Theirs', data: {} });
    expect((await api.delete('/v1/single-types/theirs')).status).toBe(404);
    expect((await other.get('/v1/single-types/theirs')).status).toBe(200);
  });
});
