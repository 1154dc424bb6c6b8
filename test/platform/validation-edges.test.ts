import { describe, expect, it } from 'vitest';
import { expectErrorShape } from '../helpers/http.js';
import { useTestApp } from '../helpers/suite.js';

const BEYOND = '2147483648';
const WAY_BEYOND = 99999999999;

describe('input edges found by probing (issue 16 items 4, 9, 12)', () => {
  const ctx = useTestApp();

  const expect422 = (res: { status: number; body: any }, field: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expectErrorShape(res.body, 422, 'VALIDATION_FAILED');
    expect(Object.keys(res.body.errors).some((k) => k === field || k.startsWith(`${field}[`) || k.startsWith(`${field}.`))).toBe(true);
  };

  it('ids beyond 32 bits are a 422 naming the field in bodies, filters and bulk lists, the same on both databases', async () => {
    const api = await ctx.site();
    expect422(await api.get(`/v1/contents?ids[]=${BEYOND}`), 'ids');
    expect422(await api.get(`/v1/tags?excludeIds[]=${BEYOND}`), 'excludeIds');
    expect422(await api.get(`/v1/contents?categoryIds[]=${BEYOND}`), 'categoryIds');
    expect422(await api.get(`/v1/contents?tagIds[]=${BEYOND}`), 'tagIds');
    expect422(await api.get(`/v1/categories?parentId=${BEYOND}`), 'parentId');
    expect422(await api.post('/v1/contents', { type: 'post', title: 'T', categoryIds: [WAY_BEYOND] }), 'categoryIds');
    expect422(await api.post('/v1/contents', { type: 'post', title: 'T', tagIds: [BEYOND] }), 'tagIds');
    expect422(await api.post('/v1/categories', { name: 'C', parentId: WAY_BEYOND }), 'parentId');
    expect422(await api.post('/v1/contents/bulk/publish', { ids: [WAY_BEYOND] }), 'ids');
    expect422(await api.post('/v1/contents/bulk/publish', { ids: [BEYOND] }), 'ids');
    expect422(await api.get('/v1/contents?page=99999999999'), 'page');
  });

  it('an id path parameter that cannot exist is simply not found (404), and only canonical decimal ids are ids', async () => {
    const api = await ctx.site();
    const tag = (await api.post('/v1/tags', { name: 'Sixteen' })).body.data;
    const id: number = tag.id;
    expect((await api.get(`/v1/tags/${id}`)).status).toBe(200);
    for (const written of [`0x${id.toString(16)}`, `+${id}`, `0${id}`, `%20${id}`, `${id}%20`, `${id}.0`, `${id}e0`, BEYOND, String(WAY_BEYOND)]) {
      const res = await api.get(`/v1/tags/${written}`);
      expect(res.status, written).toBe(404);
      expectErrorShape(res.body, 404, 'NOT_FOUND');
    }
    expect((await api.get(`/v1/contents/${BEYOND}`)).status).toBe(404);
    expect((await api.put(`/v1/tags/0${id}`, { name: 'Renamed' })).status).toBe(404);
    // Text that is no number, zero and negative numbers stay a wrong type or below the minimum, as before.
    for (const written of ['abc', '0', '-1']) expect422(await api.get(`/v1/tags/${written}`), 'id');
    expect((await api.get(`/v1/tags/${id}`)).body.data.name).toBe('Sixteen');
    expect422(await api.get('/v1/tags?ids[]=0x10'), 'ids');
  });

  it('impossible dates are a 422 naming the field; real ones (leap days too) are accepted', async () => {
    const api = await ctx.site();
    for (const value of ['2026-02-30', '2026-13-45', '2026-01-01T25:61', '2026-01-01T10:00+99:99', '2026-02-29', '2026-04-31', '2026-00-10']) {
      expect422(await api.get(`/v1/contents?dateFrom=${encodeURIComponent(value)}`), 'dateFrom');
    }
    expect422(await api.get('/v1/tags?dateTo=2026-06-31'), 'dateTo');
    expect422(await api.get('/v1/contents?publishedFrom=2025-02-29'), 'publishedFrom');
    for (const value of ['2024-02-29', '2026-12-31T23:59:59.999Z', '2026-06-01T10:00+02:00', '2026-06-01 10:00']) {
      expect((await api.get(`/v1/contents?dateFrom=${encodeURIComponent(value)}`)).status, value).toBe(200);
    }
    expect422(await api.post('/v1/contents', { type: 'post', title: 'T', status: 'scheduled', scheduledAt: '2099-02-30T10:00:00Z' }), 'scheduledAt');
  });

  it('URL fields take only http(s) URLs (or a path where the field is an image), whatever the letter case or hidden characters', async () => {
    const api = await ctx.site();
    const bad = [
      'javascript:alert(1)',
      ' JaVaScRiPt:alert(1)',
      'java\tscript:alert(1)',
      '\u0001javascript:alert(1)',
      'data:text/html,<b>x</b>',
      'DATA:image/png;base64,AAAA',
      'vbscript:msgbox(1)',
      'ftp://example.com/a',
      'https//example.com',
      '',
    ];
    for (const value of bad) {
      expect422(await api.post('/v1/contents', { type: 'post', title: 'T', canonicalUrl: value }), 'canonicalUrl');
      expect422(await api.post('/v1/contents', { type: 'post', title: 'T', ogImage: value }), 'ogImage');
      expect422(await api.post('/v1/contents', { type: 'post', title: 'T', featuredImageUrl: value }), 'featuredImageUrl');
      expect422(await api.post('/v1/categories', { name: 'C', image: value }), 'image');
      expect422(await api.put('/v1/site/settings', { logoUrl: value }), 'logoUrl');
      expect422(await api.put('/v1/site/settings', { faviconUrl: value }), 'faviconUrl');
    }
    // A protocol-relative URL points at another host: not a path of the site.
    expect422(await api.post('/v1/contents', { type: 'post', title: 'T', ogImage: '//evil.example/x.png' }), 'ogImage');
    expect422(await api.post('/v1/contents', { type: 'post', title: 'T', canonicalUrl: '/relative/path' }), 'canonicalUrl');
    const ok = await api.post('/v1/contents', {
      type: 'post',
      title: 'Good URLs',
      canonicalUrl: 'https://example.com/good-urls',
      ogImage: '/images/og.png',
      featuredImageUrl: 'http://cdn.example.com/a.jpg?x=1',
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect((await api.post('/v1/categories', { name: 'Pictured', image: '/img/c.png' })).status).toBe(201);
    expect((await api.put('/v1/site/settings', { logoUrl: 'https://example.com/logo.svg' })).status).toBe(200);
  });
});
