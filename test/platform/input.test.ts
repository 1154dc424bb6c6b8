import { describe, expect, it } from 'vitest';
import { expectErrorShape } from '../helpers/http.js';
import { useTestApp } from '../helpers/suite.js';

const ctx = useTestApp();

const nested = (levels: number) => {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};

describe('JSON bodies (issue 16, items 4, 7, 12)', () => {
  it('refuses nesting beyond 64 levels with a 422 before processing, and accepts 64', async () => {
    const api = await ctx.site();
    const deepText = `${'{"a":'.repeat(5000)}"leaf"${'}'.repeat(5000)}`;
    const deep = await api.call('POST', '/v1/contents', `{"type":"post","title":"x","metadata":${deepText}}`, {
      'content-type': 'application/json',
    });
    expect(deep.status).toBe(422);
    expectErrorShape(deep.body, 422, 'VALIDATION_FAILED');
    expect(deep.body.errors).toHaveProperty('body');
    const single = await api.post('/v1/single-types', { slug: 'deep', name: 'Deep', data: nested(200) });
    expect(single.status).toBe(422);
    // 62 levels of metadata plus the body object itself and `metadata`: 64 in all.
    const ok = await api.post('/v1/contents', { type: 'post', title: 'ok', metadata: nested(63) });
    expect(ok.status, JSON.stringify(ok.body).slice(0, 200)).toBe(201);
    expect((await api.get('/v1/contents')).body.meta.total).toBe(1);
  });

  it('keeps brackets inside strings out of the depth count', async () => {
    const api = await ctx.site();
    const res = await api.post('/v1/tags', { name: 'Brackets', description: '['.repeat(500) + '{'.repeat(500) });
    expect(res.status).toBe(201);
  });

  it('refuses a lone surrogate in JSON text with a 422 on both databases', async () => {
    const api = await ctx.site();
    for (const text of ['\\ud800', '\\udfff', 'x\\ud83dy']) {
      const res = await api.call('POST', '/v1/tags', `{"name":"bad ${text}"}`, { 'content-type': 'application/json' });
      expect(res.status, text).toBe(422);
      expectErrorShape(res.body, 422, 'VALIDATION_FAILED');
    }
    const pair = await api.call('POST', '/v1/tags', '{"name":"ok \\ud83d\\ude00"}', { 'content-type': 'application/json' });
    expect(pair.status).toBe(201);
    expect(pair.body.data.name).toBe('ok 😀');
    expect((await api.get('/v1/tags')).body.meta.total).toBe(1);
  });

  it('NFC-normalises text on write, so "Café" typed two ways is one name', async () => {
    const api = await ctx.site();
    const composed = 'Caf\u00e9';
    const decomposed = 'Cafe\u0301';
    const first = await api.post('/v1/tags', { name: decomposed });
    expect(first.status).toBe(201);
    expect(first.body.data.name).toBe(composed);
    const second = await api.post('/v1/tags', { name: composed });
    expect(second.status).toBe(422);
    expectErrorShape(second.body, 422, 'NAME_TAKEN');
    expect((await api.get(`/v1/tags?search=${encodeURIComponent(composed)}`)).body.meta.total).toBe(1);
  });

  it('answers malformed JSON with 400 INVALID_JSON and the error body (decisions H12)', async () => {
    const api = await ctx.site();
    const res = await api.call('POST', '/v1/tags', '{"name": ', { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 400, 'INVALID_JSON');
  });
});

describe('NUL in query strings and paths (issue 36 item 8)', () => {
  it('answers the same 422 naming the parameter on both databases, for every list search and a path', async () => {
    const api = await ctx.site();
    for (const url of ['/v1/media?search=a%00b', '/v1/tags?search=%00', '/v1/contents?search=x%00', '/v1/redirects?search=%00', '/v1/media?search[]=%00']) {
      const res = await api.get(url);
      expect(res.status, url).toBe(422);
      expectErrorShape(res.body, 422, 'VALIDATION_FAILED');
      expect(res.body.errors, url).toEqual({ search: ['must not contain NUL (\\u0000) characters'] });
    }
    const path = await api.get('/v1/contents/slug/a%00b');
    expect(path.status).toBe(422);
    expect(path.body.errors).toEqual({ slug: ['must not contain NUL (\\u0000) characters'] });
    // Other control characters are text like any other: a search finds nothing, on both databases.
    expect((await api.get('/v1/media?search=%01')).body.meta.total).toBe(0);
  });
});
