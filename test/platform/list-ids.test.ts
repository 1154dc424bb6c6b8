import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectErrorShape, multipartBody } from '../helpers/http.js';
import { type SiteClient, useTestApp } from '../helpers/suite.js';

/**
 * Issue 36 item 8: `ids[]` and `excludeIds[]` of every list that exposes them take that list's
 * own id type: media ids are UUIDs, the others integers. Per list: two records are made, `ids[]`
 * finds the first only, `excludeIds[]` leaves it out, and an id of the other type is a 422.
 */
const ctx = useTestApp();

let n = 0;
const next = () => ++n;

async function created(res: Promise<{ status: number; body: any }>) {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.data.id as number | string;
}

async function upload(api: SiteClient) {
  const { payload, headers } = multipartBody([{ name: 'file', filename: `f${next()}.txt`, data: Buffer.from(`file ${n}`), type: 'text/plain' }]);
  const res = await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id as string;
}

const LISTS: Array<{ path: string; idType: 'integer' | 'uuid'; create(api: SiteClient): Promise<number | string>; trash?: boolean }> = [
  { path: '/v1/contents', idType: 'integer', create: (api) => created(api.post('/v1/contents', { type: 'post', title: `Post ${next()}` })) },
  { path: '/v1/categories', idType: 'integer', create: (api) => created(api.post('/v1/categories', { name: `Category ${next()}` })) },
  { path: '/v1/tags', idType: 'integer', create: (api) => created(api.post('/v1/tags', { name: `Tag ${next()}` })) },
  { path: '/v1/variables', idType: 'integer', create: (api) => created(api.post('/v1/variables', { key: `key.${next()}`, label: 'L', value: 'v' })) },
  { path: '/v1/site-blocks', idType: 'integer', create: (api) => created(api.post('/v1/site-blocks', { name: `Block ${next()}`, type: 'global' })) },
  { path: '/v1/redirects', idType: 'integer', create: (api) => created(api.post('/v1/redirects', { sourcePath: `/from-${next()}`, targetUrl: '/to' })) },
  {
    path: '/v1/forms',
    idType: 'integer',
    create: (api) => created(api.post('/v1/forms', { name: `Form ${next()}`, schema: { fields: [{ name: 'msg', type: 'text', label: 'Message' }] } })),
  },
  { path: '/v1/media', idType: 'uuid', create: upload },
  { path: '/v1/media/trash', idType: 'uuid', create: upload, trash: true },
];

describe('ids[] and excludeIds[] take each list its own id type (issue 36 item 8)', () => {
  for (const list of LISTS) {
    it(`${list.path}: ${list.idType} ids`, async () => {
      const api = await ctx.site();
      const first = await list.create(api);
      const second = await list.create(api);
      if (list.trash) for (const id of [first, second]) expect((await api.delete(`/v1/media/${id}`)).status).toBeLessThan(300);
      const idsOf = async (query: string) => {
        const res = await api.get(`${list.path}?${query}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body.data.map((r: { id: unknown }) => r.id);
      };
      expect(await idsOf(`ids[]=${first}`)).toEqual([first]);
      expect(await idsOf(`ids=${first}&ids=${second}&sortBy=created_at&sortOrder=asc`)).toEqual([first, second]);
      expect(await idsOf(`excludeIds[]=${first}`)).toEqual([second]);
      const wrong = list.idType === 'uuid' ? '12' : randomUUID();
      for (const name of ['ids', 'excludeIds']) {
        const res = await api.get(`${list.path}?${name}[]=${wrong}`);
        expect(res.status, `${name}[]=${wrong}`).toBe(422);
        expectErrorShape(res.body, 422);
      }
    });
  }
});
