import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { allScopesExcept, buildTestApp, createSiteWithToken, createTokenFor, TEST_SECRET_KEY } from '../../../test/helpers/app.js';
import { type Client, client, expect422, expectErrorShape, ISO_TIMESTAMP } from '../../../test/helpers/http.js';
import { describeTranslations, useTestApp } from '../../../test/helpers/suite.js';
import { parseKey, SecretBox } from '../../shared/secrets.js';
import { filledTooFast, fillToken } from './forms.submissions.js';

const ctx = useTestApp();
const site = ctx.site;

const CONTACT = [
  { name: 'name', type: 'text', label: 'Your name', required: true, placeholder: 'Ada', validation: { maxLength: 50 } },
  { name: 'email', type: 'email', label: 'E-mail', required: true },
  { name: 'topic', type: 'select', label: 'Topic', options: [{ value: 'sales', label: 'Sales' }, 'support'] },
  { name: 'orderNo', type: 'text', condition: { field: 'topic', operator: 'equals', value: 'support' }, required: true },
  { name: 'message', type: 'textarea', validation: { minLength: 5 } },
  { name: 'consent', type: 'checkbox', required: true, label: 'I agree' },
];

async function form(api: Client, body: Record<string, unknown> = {}) {
  const res = await api.post('/v1/forms', { name: 'Contact', schema: CONTACT, status: 'active', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

const keyOf = async (api: Client) => (await api.get('/v1/site/info')).body.data.publicKey as string;

async function outbox(siteId: string) {
  const rows = await ctx.app.database.db.selectFrom('outbox_events').select(['type', 'payload']).where('site_id', '=', siteId).orderBy('id').execute();
  return rows.map((r) => ({ type: r.type, data: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
}

function visitor(key: string, ip = '203.0.113.7') {
  const anon = client(ctx.app);
  return {
    get: (url: string, headers: Record<string, string> = {}) => anon.get(url, { 'x-site-key': key, ...headers }),
    json: (slug: string, body: unknown, query = '') =>
      ctx.app.inject({
        method: 'POST',
        url: `/v1/public/forms/${slug}/submissions${query}`,
        payload: body as object,
        headers: { 'x-site-key': key },
        remoteAddress: ip,
      }),
    html: (slug: string, body: string, query = '') =>
      ctx.app.inject({
        method: 'POST',
        url: `/v1/public/forms/${slug}/submissions?siteKey=${key}${query}`,
        payload: body,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Mozilla/5.0 test' },
        remoteAddress: ip,
      }),
  };
}

const good = { name: 'Ada', email: 'ada@example.com', topic: 'sales', message: 'Hello there', consent: true };

describe('forms', () => {
  it('creates a form with every field (201), defaults, a slug from the name, and reads it back', async () => {
    const api = await site();
    const res = await api.post('/v1/forms', {
      name: 'Contact us',
      description: 'Say hi',
      schema: { fields: CONTACT },
      settings: { honeypotField: 'website', minFillSeconds: 3, pages: [{ title: 'You', fields: ['name', 'email'] }, { fields: ['topic', 'message'] }] },
      notifications: { enabled: true, recipientEmails: ['team@example.com'], subject: 'New message' },
      successMessage: 'Thanks!',
      redirectUrl: '/thanks',
      submitLabel: 'Send',
      closedMessage: 'We are closed.',
      captchaEnabled: false,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const data = res.body.data;
    expect(data).toMatchObject({
      name: 'Contact us',
      slug: 'contact-us',
      description: 'Say hi',
      status: 'draft',
      locale: 'en',
      submissionCount: 0,
      honeypotEnabled: true,
      captchaEnabled: false,
      successMessage: 'Thanks!',
      redirectUrl: '/thanks',
      submitLabel: 'Send',
      closedMessage: 'We are closed.',
      settings: { honeypotField: 'website', minFillSeconds: 3 },
      notifications: { enabled: true, recipientEmails: ['team@example.com'], subject: 'New message' },
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(data.schema[2].options).toEqual([{ value: 'sales', label: 'Sales' }, { value: 'support' }]);
    expect((await api.get(`/v1/forms/${data.id}`)).body).toEqual(res.body);
    const minimal = await form(api, { name: 'Minimal', schema: [], status: undefined });
    expect(minimal).toMatchObject({ status: 'draft', settings: {}, notifications: {}, successMessage: null, redirectUrl: null, description: null });
  });

  it('refuses bad definitions with the path of each problem, and stores nothing', async () => {
    const api = await site();
    const bad = [
      { name: 'a', type: 'color' },
      { name: 'b', type: 'select' },
      { name: 'a', type: 'text' },
      { name: '1x', type: 'text' },
      { name: 'c', type: 'text', validation: { pattern: '(a)\\1' } },
      { name: 'd', type: 'rating', validation: { max: 6 } },
      { name: 'e', type: 'text', condition: { field: 'nope', operator: 'equals', value: 'x' } },
      { name: 'f', type: 'text', options: ['x'] },
      { name: 'g', type: 'radio', options: ['x', 'x'] },
      { name: 'h', type: 'text', condition: { field: 'i', operator: 'isEmpty' } },
      { name: 'i', type: 'text', condition: { field: 'h', operator: 'isEmpty' } },
    ];
    expect422(await api.post('/v1/forms', { name: 'Bad', schema: bad }), 'SCHEMA_INVALID', [
      'schema[0].type',
      'schema[1].options',
      'schema[2].name',
      'schema[3].name',
      'schema[4].validation.pattern',
      'schema[5].validation.max',
      'schema[6].condition.field',
      'schema[7].options',
      'schema[8].options[1].value',
      'schema[9].condition.field',
      'schema[10].condition.field',
    ]);
    expect422(await api.post('/v1/forms', { name: 'No schema' }), 'VALIDATION_FAILED', ['schema']);
    expect422(
      await api.post('/v1/forms', { name: 'Many', schema: Array.from({ length: 101 }, (_, i) => ({ name: `f${i}`, type: 'text' })) }),
      'SCHEMA_INVALID',
      ['schema'],
    );
    expect((await api.post('/v1/forms', { name: 'Hundred', schema: Array.from({ length: 100 }, (_, i) => ({ name: `f${i}`, type: 'text' })) })).status).toBe(
      201,
    );
    expect422(
      await api.post('/v1/forms', { name: 'Pages', schema: CONTACT, settings: { pages: [{ fields: ['name', 'nope'] }, { fields: ['name'] }] } }),
      'VALIDATION_FAILED',
      ['settings.pages[0].fields[1]', 'settings.pages[1].fields[0]'],
    );
    expect422(await api.post('/v1/forms', { name: 'Honey', schema: CONTACT, settings: { honeypotField: 'email' } }), 'VALIDATION_FAILED', [
      'settings.honeypotField',
    ]);
    expect422(await api.post('/v1/forms', { name: 'Status', schema: [], status: 'open' }), 'VALIDATION_FAILED', ['status']);
    expect422(await api.post('/v1/forms', { name: 'x'.repeat(256), schema: [] }), 'VALIDATION_FAILED', ['name']);
    expect422(await api.post('/v1/forms', { name: 'D', schema: [], description: 'x'.repeat(1001) }), 'VALIDATION_FAILED', ['description']);
    expect422(await api.post('/v1/forms', { name: 'R', schema: [], redirectUrl: 'javascript:alert(1)' }), 'VALIDATION_FAILED', ['redirectUrl']);
    expect((await api.get('/v1/forms')).body.meta.total).toBe(1);
  });

  it('lists with submissionCount and filters; delivery tokens see active forms only', async () => {
    const api = await site();
    const active = await form(api);
    const draft = await form(api, { name: 'Survey', status: 'draft' });
    await form(api, { name: 'Old', status: 'archived' });
    const names = async (c: Client, q = '') => (await c.get(`/v1/forms${q}`)).body.data.map((f: any) => f.name);
    expect(await names(api)).toEqual(['Old', 'Survey', 'Contact']);
    expect(await names(api, '?status=draft')).toEqual(['Survey']);
    expect(await names(api, '?search=surv')).toEqual(['Survey']);
    expect(await names(api, '?sortBy=name')).toEqual(['Contact', 'Old', 'Survey']);
    const front = client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { kind: 'delivery', scopes: ['forms.view'] })).token);
    expect(await names(front)).toEqual(['Contact']);
    expect((await front.get(`/v1/forms/${active.id}`)).status).toBe(200);
    expect((await front.get(`/v1/forms/${draft.id}`)).status).toBe(404);
    expect((await front.get(`/v1/forms/${active.id}/submissions`)).status).toBe(403);
  });

  it('keeps submissions on update and deletes them with the form', async () => {
    const api = await site();
    const f = await form(api);
    const key = await keyOf(api);
    expect((await visitor(key).json(f.slug, good)).statusCode).toBe(201);
    const updated = await api.put(`/v1/forms/${f.id}`, { name: 'Contact 2', schema: [...CONTACT, { name: 'extra', type: 'number' }] });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ name: 'Contact 2', submissionCount: 1 });
    expect((await api.get(`/v1/forms/${f.id}/submissions`)).body.meta.total).toBe(1);
    expect422(await api.put(`/v1/forms/${f.id}`, { schema: [{ name: 'x', type: 'nope' }] }), 'SCHEMA_INVALID', ['schema[0].type']);
    expect((await api.delete(`/v1/forms/${f.id}`)).body).toEqual({ message: 'Form deleted.' });
    const left = await ctx.app.database.db.selectFrom('form_submissions').select('id').where('form_id', '=', f.id).execute();
    expect(left).toEqual([]);
  });
});

describeTranslations(ctx, {
  path: '/v1/forms',
  body: (n) => ({ name: `Form ${n}`, schema: CONTACT, description: `About ${n}` }),
  translated: { field: 'description', empty: null },
});

describe('copy-to-locale of a form', () => {
  it('is a draft with the same fields, labels, placeholders and option labels', async () => {
    const api = await site(['en', 'de']);
    const f = await form(api);
    const copy = await api.post(`/v1/forms/${f.id}/copy-to-locale`, { locale: 'de' });
    expect(copy.body.data).toMatchObject({ locale: 'de', status: 'draft', slug: 'contact', submissionCount: 0 });
    expect(copy.body.data.schema).toEqual(f.schema);
  });
});

describe('public form and submissions (decisions F1, F3, G19)', () => {
  it('reads an active form with the site key (ETag, 304), 404 for drafts and archived, 409 when closed', async () => {
    const api = await site();
    const f = await form(api, { closedMessage: 'See you next year.' });
    await form(api, { name: 'Draft', status: 'draft' });
    const v = visitor(await keyOf(api));
    const res = await v.get('/v1/public/forms/contact');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      name: 'Contact',
      slug: 'contact',
      schema: f.schema,
      honeypotEnabled: true,
      fillToken: expect.stringMatching(/^\d+\.[\w-]{22}$/),
    });
    expect((await v.get('/v1/public/forms/contact', { 'if-none-match': String(res.headers.etag) })).status).toBe(304);
    expect((await v.get('/v1/public/forms/draft')).status).toBe(404);
    expect((await client(ctx.app).get('/v1/public/forms/contact')).status).toBe(401);
    await api.put(`/v1/forms/${f.id}`, { status: 'closed' });
    const closed = await v.get('/v1/public/forms/contact');
    expect(closed.status).toBe(409);
    expectErrorShape(closed.body, 409, 'FORM_CLOSED');
    expect(closed.body.message).toBe('See you next year.');
    expect((await v.json('contact', good)).statusCode).toBe(409);
    await api.put(`/v1/forms/${f.id}`, { status: 'archived' });
    expect((await v.json('contact', good)).statusCode).toBe(404);
  });

  it('stores a valid JSON submission with address and agent, counts it and emits form.submitted', async () => {
    const api = await site();
    const f = await form(api, { successMessage: 'Got it.' });
    const res = await visitor(await keyOf(api), '198.51.100.23').json('contact', { ...good, unknown: 'dropped', orderNo: 'hidden by its condition' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ data: { message: 'Got it.' } });
    const list = (await api.get(`/v1/forms/${f.id}/submissions`)).body;
    expect(list.meta.total).toBe(1);
    expect(list.data[0]).toEqual({
      id: expect.any(Number),
      formId: f.id,
      status: 'new',
      data: { name: 'Ada', email: 'ada@example.com', topic: 'sales', message: 'Hello there', consent: true },
      ipAddress: '198.51.100.23',
      userAgent: 'lightMyRequest',
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      updatedAt: null,
    });
    expect((await api.get(`/v1/forms/${f.id}`)).body.data.submissionCount).toBe(1);
    // A browser on the site's own domain may read the answer (CORS); another origin may not.
    const key = await keyOf(api);
    const cors = (origin: string) =>
      ctx.app.inject({
        method: 'POST',
        url: '/v1/public/forms/contact/submissions',
        payload: good,
        headers: { 'x-site-key': key, origin },
        remoteAddress: '198.51.100.24',
      });
    expect((await cors('https://example.test')).headers['access-control-allow-origin']).toBe('https://example.test');
    expect((await cors('https://evil.example')).headers['access-control-allow-origin']).toBeUndefined();
    const events = (await outbox(api.siteId)).slice(0, 1);
    expect(events).toEqual([
      { type: 'form.submitted', data: expect.objectContaining({ formId: f.id, formSlug: 'contact', submissionId: list.data[0].id, data: list.data[0].data }) },
    ]);
  });

  it('validates each field type (F3) with data.<field> paths and stores nothing on a 422', async () => {
    const api = await site();
    const schema = [
      { name: 'email', type: 'email', required: true },
      { name: 'tel', type: 'tel' },
      { name: 'n', type: 'number', validation: { min: 1, max: 10 } },
      { name: 'd', type: 'date' },
      { name: 'dt', type: 'datetime' },
      { name: 't', type: 'time' },
      { name: 'r', type: 'rating' },
      { name: 'pick', type: 'radio', options: ['a', 'b'] },
      { name: 'many', type: 'checkbox', options: ['x', 'y', 'z'] },
      { name: 'code', type: 'text', validation: { pattern: '^[A-Z]{3}$' } },
      { name: 'long', type: 'textarea', validation: { maxLength: 10 } },
      { name: 'h', type: 'hidden', defaultValue: 'campaign-7' },
    ];
    const f = await form(api, { name: 'Types', schema });
    const v = visitor(await keyOf(api));
    const bad = await v.json('types', {
      email: 'not-an-email',
      tel: 'call me',
      n: 11,
      d: '2026-02-30',
      dt: '2026-01-01 10:00',
      t: '25:00',
      r: 6,
      pick: 'c',
      many: ['x', 'w'],
      code: 'abc',
      long: 'x'.repeat(11),
    });
    expect(bad.statusCode).toBe(422);
    expect(Object.keys(bad.json().errors).sort()).toEqual(
      ['data.code', 'data.d', 'data.dt', 'data.email', 'data.long', 'data.many', 'data.n', 'data.pick', 'data.r', 'data.t', 'data.tel'].sort(),
    );
    expect422({ status: 422, body: (await v.json('types', {})).json() }, 'VALIDATION_FAILED', ['data.email']);
    const ok = await v.json('types', {
      email: ' ada@example.com ',
      tel: '+49 (30) 123-456',
      n: '7',
      d: '2028-02-29',
      dt: '2026-01-01T10:00',
      t: '09:30',
      r: '5',
      pick: 'b',
      many: ['z', 'x', 'z'],
      code: 'ABC',
      long: 'short',
    });
    expect(ok.statusCode, ok.body).toBe(201);
    const [stored] = (await api.get(`/v1/forms/${f.id}/submissions`)).body.data;
    expect(stored.data).toEqual({
      email: 'ada@example.com',
      tel: '+49 (30) 123-456',
      n: 7,
      d: '2028-02-29',
      dt: '2026-01-01T10:00',
      t: '09:30',
      r: 5,
      pick: 'b',
      many: ['z', 'x'],
      code: 'ABC',
      long: 'short',
      h: 'campaign-7',
    });
    expect((await api.get(`/v1/forms/${f.id}`)).body.data.submissionCount).toBe(1);
  });

  it('requires a field shown by its condition, and a required consent checkbox to be checked', async () => {
    const api = await site();
    await form(api);
    const v = visitor(await keyOf(api));
    const res = await v.json('contact', { ...good, topic: 'support', consent: false });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors).sort()).toEqual(['data.consent', 'data.orderNo']);
    expect((await v.json('contact', { ...good, topic: 'support', orderNo: 'A-1' })).statusCode).toBe(201);
  });

  it('counts the minimum fill time from the millisecond the form was read, and from its second for a token of the first format (decisions F12)', () => {
    const secrets = new SecretBox(parseKey(TEST_SECRET_KEY, 'test'));
    const form = { id: 7, site_id: 'site-a' };
    // Issued late in a second: a fill 51 ms later is too fast, though the next second has begun.
    const at = 1_700_000_000_999;
    const token = fillToken(secrets, form, at);
    expect(token.split('.')[0]).toBe(String(at));
    expect(filledTooFast(secrets, form, token, 1, at + 51)).toBe(true);
    expect(filledTooFast(secrets, form, token, 1, at + 999)).toBe(true);
    expect(filledTooFast(secrets, form, token, 1, at + 1000)).toBe(false);
    // Another form's token, a changed time, no token: too fast (spam) whatever the clock says.
    expect(filledTooFast(secrets, { ...form, id: 8 }, token, 1, at + 60_000)).toBe(true);
    expect(filledTooFast(secrets, form, token.replace(String(at), String(at - 60_000)), 1, at + 1000)).toBe(true);
    expect(filledTooFast(secrets, form, undefined, 1, at + 60_000)).toBe(true);
    expect(filledTooFast(secrets, form, undefined, 0, at)).toBe(false);
    // A token handed out before the change (whole seconds) still verifies, counted from its second.
    const seconds = 1_700_000_000;
    const old = `${seconds}.${secrets.sign(`form-fill:${form.site_id}:${form.id}:${seconds}`)}`;
    expect(filledTooFast(secrets, form, old, 1, seconds * 1000 + 999)).toBe(true);
    expect(filledTooFast(secrets, form, old, 1, seconds * 1000 + 1000)).toBe(false);
  });

  it('stores a filled honeypot and a too-fast fill as spam, answers success, counts and announces neither', async () => {
    const api = await site();
    const f = await form(api, { settings: { minFillSeconds: 1 } });
    const v = visitor(await keyOf(api));
    const token = (await v.get('/v1/public/forms/contact')).body.data.fillToken;
    expect((await v.json('contact', { ...good, _gotcha: 'http://spam.example', _fillToken: token })).statusCode).toBe(201);
    expect((await v.json('contact', { ...good, _fillToken: token })).statusCode).toBe(201);
    expect((await v.json('contact', { ...good })).statusCode).toBe(201);
    expect((await v.json('contact', { ...good, _fillToken: `${Math.floor(Date.now() / 1000) - 60}.forgedforgedforgedforg` })).statusCode).toBe(201);
    // Spam is not validated either (a bot learns nothing from a 422).
    expect((await v.json('contact', { _gotcha: 'x', email: 'bad' })).statusCode).toBe(201);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await v.json('contact', { ...good, _fillToken: token })).statusCode).toBe(201);
    const all = (await api.get(`/v1/forms/${f.id}/submissions?limit=100`)).body.data;
    expect(all.map((s: any) => s.status)).toEqual(['new', 'spam', 'spam', 'spam', 'spam', 'spam']);
    expect((await api.get(`/v1/forms/${f.id}`)).body.data.submissionCount).toBe(1);
    expect((await outbox(api.siteId)).length).toBe(1);
    // A form without the honeypot check stores the field as nothing (unknown key) and accepts it.
    const open = await form(api, { name: 'Open', honeypotEnabled: false });
    expect((await v.json(open.slug, { ...good, _gotcha: 'x' })).statusCode).toBe(201);
    expect((await api.get(`/v1/forms/${open.id}/submissions`)).body.data[0].status).toBe('new');
  });

  it('takes an HTML form post: repeated keys as a list, a 303 to the redirectUrl on the site, else JSON', async () => {
    const api = await site();
    const schema = [...CONTACT, { name: 'interests', type: 'checkbox', options: ['a', 'b', 'c'] }];
    const f = await form(api, { schema, redirectUrl: '/thanks?from=contact' });
    const key = await keyOf(api);
    const v = visitor(key);
    const body = 'name=Ada+L.&email=ada%40example.com&topic=sales&message=Hello+there&consent=on&interests=a&interests=c';
    const res = await v.html('contact', body);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe('https://example.test/thanks?from=contact');
    const [stored] = (await api.get(`/v1/forms/${f.id}/submissions`)).body.data;
    expect(stored.data).toEqual({ name: 'Ada L.', email: 'ada@example.com', topic: 'sales', message: 'Hello there', consent: true, interests: ['a', 'c'] });
    expect(stored.userAgent).toBe('Mozilla/5.0 test');
    await api.put(`/v1/forms/${f.id}`, { redirectUrl: 'https://other.example/done' });
    expect((await v.html('contact', body)).headers.location).toBe('https://other.example/done');
    await api.put(`/v1/forms/${f.id}`, { redirectUrl: null });
    const plain = await v.html('contact', body);
    expect(plain.statusCode).toBe(201);
    expect(plain.json()).toEqual({ data: { message: 'Thank you.' } });
    const invalid = await v.html('contact', 'name=&email=x');
    expect(invalid.statusCode).toBe(422);
    // urlencoded bodies are read only here: elsewhere they stay a 415.
    const elsewhere = await ctx.app.inject({
      method: 'POST',
      url: '/v1/tags',
      payload: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${api.token}` },
    });
    expect(elsewhere.statusCode).toBe(415);
  });

  it('stores every one of many concurrent submissions exactly once, with an exact count and no 5xx', async () => {
    const api = await site();
    const f = await form(api);
    const key = await keyOf(api);
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        visitor(key, `10.0.${Math.floor(i / 250)}.${i % 250}`).json('contact', { ...good, message: `Message number ${i}` }),
      ),
    );
    expect(results.filter((r) => r.statusCode !== 201).map((r) => r.statusCode)).toEqual([]);
    expect((await api.get(`/v1/forms/${f.id}`)).body.data.submissionCount).toBe(1000);
    const rows = await ctx.app.database.db.selectFrom('form_submissions').select('data').where('form_id', '=', f.id).execute();
    const messages = new Set(rows.map((r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data).message));
    expect(rows.length).toBe(1000);
    expect(messages.size).toBe(1000);
  });
});

describe('the inbox (decisions F1, F2)', () => {
  async function inbox() {
    const api = await site();
    const f = await form(api);
    const v = visitor(await keyOf(api));
    for (const [i, message] of ['Hello world', 'Need a QUOTE please', '=HYPERLINK("http://evil","x")', 'Line one\nline "two", three'].entries()) {
      expect((await v.json('contact', { ...good, name: `Person ${i}`, message })).statusCode).toBe(201);
    }
    return { api, f };
  }

  it('lists, filters (unread = new), searches the values, changes status and deletes, keeping submissionCount exact', async () => {
    const { api, f } = await inbox();
    const list = async (q = '') => (await api.get(`/v1/forms/${f.id}/submissions${q}`)).body;
    expect((await list()).meta.total).toBe(4);
    expect((await list('?search=quote')).data.map((s: any) => s.data.name)).toEqual(['Person 1']);
    const [first] = (await list('?sortBy=created_at&sortOrder=asc')).data;
    const changed = await api.put(`/v1/forms/${f.id}/submissions/${first.id}/status`, { status: 'read' });
    expect(changed.body.data).toMatchObject({ status: 'read', updatedAt: expect.stringMatching(ISO_TIMESTAMP) });
    expect((await list('?status=unread')).meta.total).toBe(3);
    expect((await list('?status=read')).meta.total).toBe(1);
    await api.put(`/v1/forms/${f.id}/submissions/${first.id}/status`, { status: 'spam' });
    expect((await api.get(`/v1/forms/${f.id}`)).body.data.submissionCount).toBe(3);
    await api.put(`/v1/forms/${f.id}/submissions/${first.id}/status`, { status: 'unread' });
    expect((await api.get(`/v1/forms/${f.id}/submissions/${first.id}`)).body.data.status).toBe('new');
    expect((await api.get(`/v1/forms/${f.id}`)).body.data.submissionCount).toBe(4);
    expect422(await api.put(`/v1/forms/${f.id}/submissions/${first.id}/status`, { status: 'deleted' }), 'VALIDATION_FAILED', ['status']);
    expect((await api.delete(`/v1/forms/${f.id}/submissions/${first.id}`)).body).toEqual({ message: 'Submission deleted.' });
    expect((await api.get(`/v1/forms/${f.id}`)).body.data.submissionCount).toBe(3);
    expect((await api.get(`/v1/forms/${f.id}/submissions/${first.id}`)).status).toBe(404);
    // A submission of another form is not found through this one.
    const other = await form(api, { name: 'Other' });
    const [some] = (await list()).data;
    expect((await api.get(`/v1/forms/${other.id}/submissions/${some.id}`)).status).toBe(404);
    expect((await api.get('/v1/forms/999999/submissions')).status).toBe(404);
  });

  it('exports CSV (RFC 4180, formulas neutralised) that a CSV parser reads back', async () => {
    const { api, f } = await inbox();
    const res = await api.get(`/v1/forms/${f.id}/submissions/export`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    const rows = parse(res.text, { bom: true }) as string[][];
    expect(rows[0]).toEqual(['name', 'email', 'topic', 'orderNo', 'message', 'consent', 'status', 'created_at']);
    expect(rows).toHaveLength(5);
    expect(rows[3]![4]).toBe('\'=HYPERLINK("http://evil","x")');
    expect(rows[4]!.slice(0, 7)).toEqual(['Person 3', 'ada@example.com', 'sales', '', 'Line one\nline "two", three', 'true', 'new']);
  });

  it('guards the inbox with the submissions scopes (403)', async () => {
    const { api, f } = await inbox();
    const [s] = (await api.get(`/v1/forms/${f.id}/submissions`)).body.data;
    for (const [scope, call] of [
      ['forms.submissions.view', (c: Client) => c.get(`/v1/forms/${f.id}/submissions`)],
      ['forms.submissions.view', (c: Client) => c.get(`/v1/forms/${f.id}/submissions/${s.id}`)],
      ['forms.submissions.export', (c: Client) => c.get(`/v1/forms/${f.id}/submissions/export`)],
      ['forms.submissions.delete', (c: Client) => c.delete(`/v1/forms/${f.id}/submissions/${s.id}`)],
      ['forms.update', (c: Client) => c.put(`/v1/forms/${f.id}/submissions/${s.id}/status`, { status: 'read' })],
    ] as const) {
      const res = await call(client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { scopes: allScopesExcept(scope) })).token));
      expect(res.status, scope).toBe(403);
    }
  });
});

describe('public submissions are rate-limited per address', () => {
  it('answers 429 with Retry-After to a flood from one address, and keeps serving others', async () => {
    const limited = await buildTestApp({ rateLimit: { max: 1_000_000, publicMax: 20, windowMs: 60_000 } });
    try {
      const s = await createSiteWithToken(limited.app);
      const api = client(limited.app, s.token);
      await api.post('/v1/forms', { name: 'Contact', schema: CONTACT, status: 'active' });
      const key = (await api.get('/v1/site/info')).body.data.publicKey;
      const post = (ip: string) =>
        limited.app.inject({ method: 'POST', url: '/v1/public/forms/contact/submissions', payload: good, headers: { 'x-site-key': key }, remoteAddress: ip });
      const flood = await Promise.all(Array.from({ length: 30 }, () => post('192.0.2.1')));
      const codes = flood.map((r) => r.statusCode);
      if (!codes.includes(201)) throw new Error(flood[0]!.body);
      expect(codes.filter((c) => c === 201)).toHaveLength(20);
      expect(codes.filter((c) => c === 429)).toHaveLength(10);
      const limitedAnswer = flood.find((r) => r.statusCode === 429)!;
      expect(Number(limitedAnswer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expectErrorShape(limitedAnswer.json(), 429, 'RATE_LIMITED');
      expect((await post('192.0.2.2')).statusCode).toBe(201);
    } finally {
      await limited.close();
    }
  });
});
