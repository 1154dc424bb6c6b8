import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestContext } from '../helpers/app.js';
import { expectErrorShape, multipartBody } from '../helpers/http.js';
import { site } from '../helpers/suite.js';

/**
 * Malformed multipart bodies (issue 36 item 5): on every route that reads multipart, a body the
 * parser cannot read is a 400 saying so, nothing is stored, and no error-level line is logged (a
 * visitor could produce one per request at will); a JSON body where multipart is required is the
 * 415 of decisions P11.
 */
let ctx: TestContext;
const logLines: Array<{ level: number; msg: string }> = [];
beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  ctx = await buildTestApp({}, { logger: { level: 'info', stream } });
});
afterAll(() => ctx.close());

const BOUNDARY = '----cairnbroken';
const CASES = [
  {
    name: 'a content type with no boundary',
    contentType: 'multipart/form-data',
    payload: Buffer.from('--x\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nsource_path,target_url\r\n--x--\r\n'),
  },
  {
    name: 'a body cut before its final boundary',
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    payload: Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\nsource_path,target_url\r\n/a,/b\r\n--${BOUNDARY}`,
    ),
  },
  {
    name: 'a body cut inside a file part',
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    payload: Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\nsource_path,target_url\r\n/a,/b\r\n`,
    ),
  },
  {
    name: 'random bytes',
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    // A fixed sequence of every byte value, so a failure can be replayed.
    payload: Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)),
  },
];

/** Rows of the four tables the routes write, and the stored files. */
async function state(siteId: string) {
  const db = ctx.app.database.db;
  const count = async (table: 'media_files' | 'redirects' | 'sitemap_entries' | 'form_submissions') =>
    (await db.selectFrom(table).select('site_id').where('site_id', '=', siteId).execute()).length;
  return {
    media: await count('media_files'),
    redirects: await count('redirects'),
    entries: await count('sitemap_entries'),
    submissions: await count('form_submissions'),
    files: await ctx.app.storage.list(''),
  };
}

/** A 1x1 PNG uploaded the well-formed way. */
async function uploadPng(token: string) {
  const png = Buffer.from(
    '89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082',
    'hex',
  );
  const { payload, headers } = multipartBody([{ name: 'file', filename: 'a.png', data: png }]);
  const res = await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', payload, headers: { ...headers, authorization: `Bearer ${token}` } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string };
}

describe('malformed multipart bodies (issue 36 item 5)', () => {
  it('are a 400 on the public form post, media upload and replace, and both CSV imports, change nothing and log no error', async () => {
    const api = await site(ctx.app);
    const form = await api.post('/v1/forms', {
      name: 'Contact',
      status: 'active',
      schema: [
        { name: 'name', type: 'text' },
        { name: 'cv', type: 'file' },
      ],
    });
    expect(form.status).toBe(201);
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const uploaded = await uploadPng(api.token);
    const routes = [
      `/v1/public/forms/contact/submissions?siteKey=${key}`,
      '/v1/media/upload',
      `/v1/media/${uploaded.id}/replace`,
      '/v1/redirects/import',
      '/v1/sitemap/entries/import',
    ];
    const before = await state(api.siteId);
    logLines.length = 0;
    for (const url of routes) {
      for (const c of CASES) {
        const res = await ctx.app.inject({
          method: 'POST',
          url,
          payload: c.payload,
          headers: { 'content-type': c.contentType, authorization: `Bearer ${api.token}` },
        });
        expect(res.statusCode, `${url} with ${c.name}: ${res.body}`).toBe(400);
        expectErrorShape(res.json(), 400, 'BAD_REQUEST');
        expect(res.json().message).toMatch(/^The multipart body cannot be read: .+\.$/);
      }
    }
    expect(await state(api.siteId)).toEqual(before);
    // 25 requests answered, none of them logged as an error (pino's error level is 50).
    expect(logLines.filter((l) => l.msg === 'request completed')).toHaveLength(routes.length * CASES.length);
    expect(logLines.filter((l) => l.level >= 50)).toEqual([]);
  });

  it('a JSON body on the upload routes is a 415 (decisions P11), not a 406', async () => {
    const api = await site(ctx.app);
    const uploaded = await uploadPng(api.token);
    for (const url of ['/v1/media/upload', `/v1/media/${uploaded.id}/replace`]) {
      const res = await ctx.app.inject({ method: 'POST', url, payload: { file: 'x' }, headers: { authorization: `Bearer ${api.token}` } });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(415);
      expectErrorShape(res.json(), 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });
});
