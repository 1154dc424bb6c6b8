import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allScopesExcept, createTokenFor } from '../../../test/helpers/app.js';
import { client, expect422, multipartBody, type MultipartPart } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';

/** Files sent with a form (decisions F11): streamed to storage, checked by their bytes, private to the inbox. */
const ctx = useTestApp();

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(200)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(100)]);

const filesRoot = () => path.join(ctx.config.dataDir, 'files');
/** Every file under the storage root (temporary ones included). */
function storedFiles(): string[] {
  const root = filesRoot();
  if (!fs.existsSync(root)) return [];
  return (fs.readdirSync(root, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(root, f)).isFile());
}

async function setup() {
  const api = await ctx.site();
  const form = (
    await api.post('/v1/forms', {
      name: 'Apply',
      status: 'active',
      schema: [
        { name: 'name', type: 'text', required: true },
        { name: 'photo', type: 'file', required: true, validation: { accept: ['image/*'], maxSizeMb: 1 } },
        { name: 'cv', type: 'file', validation: { accept: ['application/pdf'] } },
      ],
    })
  ).body.data;
  const key = (await api.get('/v1/site/info')).body.data.publicKey;
  const post = (parts: MultipartPart[]) => {
    const { payload, headers } = multipartBody(parts);
    return ctx.app.inject({ method: 'POST', url: `/v1/public/forms/apply/submissions?siteKey=${key}`, payload, headers });
  };
  const inbox = async () => (await api.get(`/v1/forms/${form.id}/submissions`)).body.data;
  return { api, form, post, inbox };
}

describe('file fields (multipart submissions)', () => {
  it('stores files by their bytes, keeps their names for display only, and serves them to the inbox only', async () => {
    const { api, form, post, inbox } = await setup();
    const before = storedFiles().length;
    const res = await post([
      { name: 'name', value: 'Ada' },
      { name: 'photo', filename: '../../etc/passwd\u0007 me.png', type: 'text/plain', data: PNG },
      { name: 'cv', filename: 'cv.pdf', type: 'application/octet-stream', data: PDF },
      { name: 'extra', filename: 'x.png', type: 'image/png', data: PNG },
    ]);
    expect(res.statusCode, res.body).toBe(201);
    const [s] = await inbox();
    expect(s.data).toEqual({
      name: 'Ada',
      photo: { fileId: expect.stringMatching(/^[0-9a-f-]{36}$/), fileName: 'passwd me.png', size: PNG.length, type: 'image/png' },
      cv: { fileId: expect.any(String), fileName: 'cv.pdf', size: PDF.length, type: 'application/pdf' },
    });
    // Two files, under keys the service made; nothing temporary left.
    const now = storedFiles();
    expect(now.length - before).toBe(2);
    expect(now.filter((f) => !f.startsWith(`private${path.sep}forms${path.sep}`))).toEqual([]);
    const file = await ctx.app.inject({
      method: 'GET',
      url: `/v1/forms/${form.id}/submissions/${s.id}/files/${s.data.photo.fileId}`,
      headers: { authorization: `Bearer ${api.token}` },
    });
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.equals(PNG)).toBe(true);
    expect(file.headers['content-type']).toBe('image/png');
    expect(file.headers['content-disposition']).toBe("attachment; filename*=UTF-8''passwd%20me.png");
    expect(file.headers['x-content-type-options']).toBe('nosniff');
    expect(file.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    const url = `/v1/forms/${form.id}/submissions/${s.id}/files/${s.data.photo.fileId}`;
    expect(
      (await client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { scopes: allScopesExcept('forms.submissions.view') })).token).get(url)).status,
    ).toBe(403);
    expect((await (await ctx.site()).get(url)).status).toBe(404);
    expect((await api.get(`/v1/forms/${form.id}/submissions/${s.id}/files/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    // Deleting the submission deletes its files; deleting the form, every file of its submissions.
    await api.delete(`/v1/forms/${form.id}/submissions/${s.id}`);
    expect(storedFiles().length).toBe(before);
    await post([
      { name: 'name', value: 'Grace' },
      { name: 'photo', filename: 'p.png', type: 'image/png', data: PNG },
    ]);
    expect(storedFiles().length).toBe(before + 1);
    await api.delete(`/v1/forms/${form.id}`);
    expect(storedFiles().length).toBe(before);
  });

  it('refuses a wrong type, a file over the limit and a missing required file with 422, leaving no file and no row', async () => {
    const { post, inbox } = await setup();
    const before = storedFiles().length;
    const wrongType = await post([
      { name: 'name', value: 'Ada' },
      { name: 'photo', filename: 'photo.png', type: 'image/png', data: Buffer.from('just text, named like a picture') },
    ]);
    expect422({ status: wrongType.statusCode, body: wrongType.json() }, 'VALIDATION_FAILED', ['data.photo']);
    const limit = 1024 * 1024;
    const tooBig = await post([
      { name: 'name', value: 'Ada' },
      { name: 'photo', filename: 'big.png', type: 'image/png', data: Buffer.concat([PNG, Buffer.alloc(limit + 1 - PNG.length)]) },
    ]);
    expect422({ status: tooBig.statusCode, body: tooBig.json() }, 'VALIDATION_FAILED', ['data.photo']);
    expect(tooBig.json().errors['data.photo']).toEqual(['must be at most 1 MB']);
    const missing = await post([{ name: 'name', value: 'Ada' }]);
    expect422({ status: missing.statusCode, body: missing.json() }, 'VALIDATION_FAILED', ['data.photo']);
    const both = await post([
      { name: 'name', value: '' },
      { name: 'photo', filename: 'cv.pdf', type: 'image/png', data: PDF },
    ]);
    expect422({ status: both.statusCode, body: both.json() }, 'VALIDATION_FAILED', ['data.name', 'data.photo']);
    expect(storedFiles().length).toBe(before);
    expect(await inbox()).toEqual([]);
    // Exactly the limit is accepted.
    const exact = await post([
      { name: 'name', value: 'Ada' },
      { name: 'photo', filename: 'exact.png', type: 'image/png', data: Buffer.concat([PNG, Buffer.alloc(limit - PNG.length)]) },
    ]);
    expect(exact.statusCode, exact.body).toBe(201);
    expect((await inbox())[0].data.photo.size).toBe(limit);
  });

  it('never takes a file reference typed into JSON, and keeps no file of a spam submission', async () => {
    const { api, post, inbox } = await setup();
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const forged = await client(ctx.app).post(
      '/v1/public/forms/apply/submissions',
      { name: 'Ada', photo: { fileId: '00000000-0000-4000-8000-000000000000', fileName: 'x.png', size: 1, type: 'image/png' } },
      { 'x-site-key': key },
    );
    expect422(forged, 'VALIDATION_FAILED', ['data.photo']);
    const before = storedFiles().length;
    const spam = await post([
      { name: 'name', value: 'Bot' },
      { name: '_gotcha', value: 'http://spam.example' },
      { name: 'photo', filename: 'p.png', type: 'image/png', data: PNG },
    ]);
    expect(spam.statusCode).toBe(201);
    expect(storedFiles().length).toBe(before);
    expect((await inbox()).map((s: any) => [s.status, s.data.photo])).toEqual([['spam', undefined]]);
  });
});
