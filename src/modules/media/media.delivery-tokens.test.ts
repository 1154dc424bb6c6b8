import { describe, expect, it } from 'vitest';
import { createTokenFor } from '../../../test/helpers/app.js';
import { client, expectErrorShape, multipartBody } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';

/** Issue 36 item 8: a delivery token reads the library, never its trash nor a trashed file. */
const ctx = useTestApp();

describe('media trash and delivery tokens (issue 36 item 8)', () => {
  it('refuses the trash list to a delivery token (403) and answers a trashed file with 404; a management token sees both', async () => {
    const api = await ctx.site();
    const ids: string[] = [];
    for (const name of ['kept.txt', 'trashed.txt']) {
      const { payload, headers } = multipartBody([{ name: 'file', filename: name, data: Buffer.from(name), type: 'text/plain' }]);
      const res = await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().data.id);
    }
    const [kept, trashed] = ids as [string, string];
    expect((await api.delete(`/v1/media/${trashed}`)).status).toBe(200);
    const delivery = client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { kind: 'delivery', scopes: ['media.view'] })).token);

    const trash = await delivery.get('/v1/media/trash');
    expect(trash.status).toBe(403);
    expectErrorShape(trash.body, 403, 'MISSING_SCOPE');
    const file = await delivery.get(`/v1/media/${trashed}`);
    expect(file.status).toBe(404);
    expectErrorShape(file.body, 404);
    expect((await delivery.get(`/v1/media/${kept}`)).body.data.id).toBe(kept);
    expect((await delivery.get('/v1/media')).body.data.map((m: { id: string }) => m.id)).toEqual([kept]);

    expect((await api.get('/v1/media/trash')).body.data.map((m: { id: string }) => m.id)).toEqual([trashed]);
    expect((await api.get(`/v1/media/${trashed}`)).body.data.deletedAt).toEqual(expect.any(String));
  });
});
