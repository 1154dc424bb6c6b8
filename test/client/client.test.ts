import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCairnClient, createCairnPublicClient, publicHelpers } from '../../clients/typescript/src/index.js';
import { useTestApp } from '../helpers/suite.js';

/**
 * The typed client (decisions TC1) against the app on a loopback port, over real HTTP: what a front
 * end gets through `openapi-fetch` is what the document promises.
 */
const ctx = useTestApp();
let baseUrl = '';

beforeAll(async () => {
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
});

describe('typed client', () => {
  it('creates, reads and lists tags page by page with the bearer token', async () => {
    const cairn = createCairnClient({ baseUrl, token: (await ctx.site()).token });
    const ids: number[] = [];
    for (const name of ['Alpha', 'Beta', 'Gamma']) {
      const created = await cairn.POST('/v1/tags', { body: { name } });
      expect(created.response.status).toBe(201);
      ids.push(created.data!.data.id);
    }
    const read = await cairn.GET('/v1/tags/{id}', { params: { path: { id: ids[1]! } } });
    expect(read.data?.data).toMatchObject({ id: ids[1], name: 'Beta', slug: 'beta', contentCount: 0 });

    // Three tags by name, two a page: page 2 holds the third alone.
    const page2 = await cairn.GET('/v1/tags', { params: { query: { page: 2, limit: 2, sortBy: 'name', sortOrder: 'asc' } } });
    expect(page2.data?.data.map((t) => t.name)).toEqual(['Gamma']);
    expect(page2.data?.meta).toEqual({ total: 3, perPage: 2, currentPage: 2, lastPage: 2 });
    // page and limit have defaults (1 and 15), so the client may leave them out.
    const all = await cairn.GET('/v1/tags', { params: { query: { sortBy: 'name' } } });
    expect(all.data?.meta).toEqual({ total: 3, perPage: 15, currentPage: 1, lastPage: 1 });
  });

  it('answers a typed 422 with the G3 body, and another token sees nothing of it', async () => {
    const cairn = createCairnClient({ baseUrl, token: (await ctx.site()).token });
    const bad = await cairn.POST('/v1/tags', { body: { name: '' } });
    expect(bad.response.status).toBe(422);
    expect(bad.data).toBeUndefined();
    expect(bad.error).toMatchObject({ statusCode: 422, error: 'Unprocessable Entity', code: 'VALIDATION_FAILED' });
    expect(Object.keys(bad.error?.errors ?? {})).toEqual(['name']);
    // The failed request created nothing.
    expect((await cairn.GET('/v1/tags')).data?.meta.total).toBe(0);

    const anonymous = createCairnClient({ baseUrl });
    const denied = await anonymous.GET('/v1/tags');
    expect(denied.response.status).toBe(401);
    expect(denied.error?.statusCode).toBe(401);
  });

  it('submits a public form and resolves a redirect with the site key; a bad submission is a typed 422 that stores nothing', async () => {
    const cairn = createCairnClient({ baseUrl, token: (await ctx.site()).token });
    const form = await cairn.POST('/v1/forms', {
      body: {
        name: 'Contact',
        status: 'active',
        schema: [
          { name: 'email', type: 'email', label: 'E-mail', required: true },
          { name: 'message', type: 'textarea' },
        ],
      },
    });
    expect(form.response.status).toBe(201);
    const siteKey = (await cairn.GET('/v1/site/info')).data!.data.publicKey;

    const site = publicHelpers(createCairnPublicClient({ baseUrl, siteKey }));
    const sent = await site.submitForm('contact', { email: 'ann@example.org', message: 'Hello there' });
    expect(sent.response.status).toBe(201);
    expect(sent.data?.data.message).toEqual(expect.any(String));

    const missing = await site.submitForm('contact', { message: 'No address' });
    expect(missing.response.status).toBe(422);
    expect(missing.error?.code).toBe('VALIDATION_FAILED');
    expect(Object.keys(missing.error?.errors ?? {})).toEqual(['data.email']);

    const wrongKey = await publicHelpers(createCairnPublicClient({ baseUrl, siteKey: 'pk_unknown' })).submitForm('contact', { email: 'ann@example.org' });
    expect(wrongKey.response.status).toBe(401);
    expect(wrongKey.error?.code).toBe('SITE_KEY_INVALID');

    // A redirect made with the token resolves with the site key; an unknown path is a typed 404.
    await cairn.POST('/v1/redirects', { body: { sourcePath: '/old-page', targetUrl: '/new-page', statusCode: 301 } });
    const moved = await site.resolveRedirect('/old-page');
    expect(moved.data?.data).toMatchObject({ targetUrl: '/new-page', statusCode: 301 });
    const nowhere = await site.resolveRedirect('/never-was');
    expect(nowhere.response.status).toBe(404);
    expect(nowhere.error).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });

    const inbox = await cairn.GET('/v1/forms/{id}/submissions', { params: { path: { id: form.data!.data.id } } });
    expect(inbox.data?.meta.total).toBe(1);
    expect(inbox.data?.data[0]).toMatchObject({ status: 'new', data: { email: 'ann@example.org', message: 'Hello there' } });
  });
});
