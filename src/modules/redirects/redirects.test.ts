import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { connectDatabase } from '../../db/connect.js';
import { buildTestApp, createTokenFor } from '../../../test/helpers/app.js';
import { client, expectErrorShape } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { RedirectCache } from './redirects.cache.js';
import { RuleSet } from './redirects.rules.js';
import { importSeams } from './redirects.service.js';

const ctx = useTestApp();
const site = ctx.site;

type Api = Awaited<ReturnType<typeof site>>;

async function create(api: Api, body: Record<string, unknown>) {
  const res = await api.post('/v1/redirects', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function publicKeyOf(api: Api): Promise<string> {
  return (await api.get('/v1/site/info')).body.data.publicKey;
}

function multipart(filename: string, content: string, field = 'file') {
  const boundary = '----cairnTestBoundary7MA4YWxkTrZu0gW';
  const payload = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n${content}\r\n--${boundary}--\r\n`;
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('POST /v1/redirects', () => {
  it('creates a redirect (201) with the defaults: 301, exact, active, query string dropped, no note, no hits', async () => {
    const api = await site();
    const res = await api.post('/v1/redirects', { sourcePath: '/old', targetUrl: '/new' });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      sourcePath: '/old',
      targetUrl: '/new',
      statusCode: 301,
      isRegex: false,
      isActive: true,
      preserveQueryString: false,
      note: null,
      hitCount: 0,
      lastHitAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const got = await api.get(`/v1/redirects/${res.body.data.id}`);
    expect(got.body.data).toEqual(res.body.data);
  });

  it('holds paths to 1-2048 characters, the status code to 301/302/307/308 and note to 500, each a 422 naming the field', async () => {
    const api = await site();
    const long = `/${'a'.repeat(2047)}`;
    expect((await api.post('/v1/redirects', { sourcePath: long, targetUrl: `/${'b'.repeat(2047)}`, note: 'n'.repeat(500), statusCode: 308 })).status).toBe(201);
    for (const [body, field] of [
      [{ sourcePath: `${long}x`, targetUrl: '/b' }, 'sourcePath'],
      [{ sourcePath: '', targetUrl: '/b' }, 'sourcePath'],
      [{ sourcePath: '/x1', targetUrl: `/${'b'.repeat(2048)}` }, 'targetUrl'],
      [{ sourcePath: '/x2', targetUrl: '' }, 'targetUrl'],
      [{ sourcePath: '/x3', targetUrl: '/b', statusCode: 303 }, 'statusCode'],
      [{ sourcePath: '/x4', targetUrl: '/b', statusCode: '301' }, 'statusCode'],
      [{ sourcePath: '/x5', targetUrl: '/b', note: 'n'.repeat(501) }, 'note'],
      [{ sourcePath: '/x6', targetUrl: '/b', isRegex: 'yes' }, 'isRegex'],
      [{ targetUrl: '/b' }, 'sourcePath'],
      [{ sourcePath: '/x7' }, 'targetUrl'],
    ] as const) {
      const res = await api.post('/v1/redirects', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expectErrorShape(res.body, 422);
      expect(Object.keys(res.body.errors)).toContain(field);
    }
    expect((await api.get('/v1/redirects/stats')).body.total).toBe(1);
  });

  it('refuses targets that are not http(s) URLs or site paths, and exact sources that are not paths', async () => {
    const api = await site();
    for (const targetUrl of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'data:text/html,x', '//evil.test/x', 'ftp://x.test/', 'relative/path', '/a b']) {
      const res = await api.post('/v1/redirects', { sourcePath: '/from', targetUrl });
      expect(res.status, targetUrl).toBe(422);
      expectErrorShape(res.body, 422, 'TARGET_INVALID');
      expect(res.body.errors).toHaveProperty('targetUrl');
    }
    for (const sourcePath of ['old', '//evil.test/old', 'https://example.test/old']) {
      const res = await api.post('/v1/redirects', { sourcePath, targetUrl: '/new' });
      expect(res.status, sourcePath).toBe(422);
      expectErrorShape(res.body, 422, 'SOURCE_PATH_INVALID');
    }
    expect((await api.post('/v1/redirects', { sourcePath: '/from', targetUrl: 'https://other.test/to?x=1#top' })).status).toBe(201);
  });

  it('refuses a source the site already has (query string and trailing slash ignored), but not on another site', async () => {
    const api = await site();
    await create(api, { sourcePath: '/dup', targetUrl: '/one' });
    for (const sourcePath of ['/dup', '/dup/', '/dup?x=1']) {
      const res = await api.post('/v1/redirects', { sourcePath, targetUrl: '/two' });
      expect(res.status, sourcePath).toBe(422);
      expectErrorShape(res.body, 422, 'SOURCE_PATH_TAKEN');
      expect(res.body.errors).toHaveProperty('sourcePath');
    }
    // The same text as a pattern is another rule.
    expect((await api.post('/v1/redirects', { sourcePath: '/dup', targetUrl: '/three', isRegex: true })).status).toBe(201);
    const other = await site();
    expect((await other.post('/v1/redirects', { sourcePath: '/dup', targetUrl: '/one' })).status).toBe(201);
  });

  it('refuses patterns RE2 cannot run in linear time (backreferences, lookaround) and invalid ones with 422 PATTERN_INVALID', async () => {
    const api = await site();
    for (const sourcePath of ['^/(a)\\1$', '^/(?=a)', '^/(?<!a)b', '^/[unclosed', '^/(a']) {
      const res = await api.post('/v1/redirects', { sourcePath, targetUrl: '/x', isRegex: true });
      expect(res.status, sourcePath).toBe(422);
      expectErrorShape(res.body, 422, 'PATTERN_INVALID');
      expect(res.body.errors).toHaveProperty('sourcePath');
    }
    expect((await api.get('/v1/redirects/stats')).body.total).toBe(0);
  });
});

describe('targets made by capture groups (issue 36)', () => {
  it('never resolves a capture into a protocol-relative target, another host, or a control character', async () => {
    const api = await site();
    const go = await create(api, { sourcePath: '^/go/(.*)$', targetUrl: '/$1', isRegex: true });
    const shop = await create(api, { sourcePath: '^/shop/(.*)$', targetUrl: 'https://store.test/$1', isRegex: true });
    const resolve = (path: string) => api.get(`/v1/redirects/resolve?path=${encodeURIComponent(path)}`);
    expect((await resolve('/go/fine/page')).body.data).toEqual({ redirectId: go.id, targetUrl: '/fine/page', statusCode: 301 });
    expect((await resolve('/shop/a/b')).body.data).toEqual({ redirectId: shop.id, targetUrl: 'https://store.test/a/b', statusCode: 301 });
    for (const path of ['/go//evil.example/x', '/go/\\evil.example', '/go/a b', '/go/a\nSet-Cookie:x=1']) {
      const res = await resolve(path);
      expect(res.status, path).toBe(404);
      expectErrorShape(res.body, 404);
    }
    // The target keeps its host whatever the capture holds.
    expect((await resolve('/shop/@evil.example')).body.data.targetUrl).toBe('https://store.test/@evil.example');
    expect((await api.get(`/v1/redirects/${go.id}`)).body.data.hitCount).toBe(1);
  });

  it('refuses a target naming a group the pattern lacks, or a capture in the host, with 422 TARGET_INVALID', async () => {
    const api = await site();
    for (const [sourcePath, targetUrl] of [
      ['^/a/(.*)$', '/b/$2'],
      ['^/a/(x)(y)$', '/b/$9'],
      ['^/a/.*$', '/b/$1'],
      ['^/a/(.*)$', '/b/$0'],
      ['^/a/(.*)$', 'https://$1.store.test/'],
      ['^/a/(.*)$', 'https://store.test$1'],
    ]) {
      const res = await api.post('/v1/redirects', { sourcePath, targetUrl, isRegex: true });
      expect(res.status, `${sourcePath} -> ${targetUrl}`).toBe(422);
      expectErrorShape(res.body, 422, 'TARGET_INVALID');
      expect(res.body.errors).toHaveProperty('targetUrl');
    }
    // Named and nested groups count; a non-capturing group does not.
    expect((await api.post('/v1/redirects', { sourcePath: '^/n/(?P<year>\\d+)/((a)|b)$', targetUrl: '/y/$1/$3', isRegex: true })).status).toBe(201);
    expect((await api.post('/v1/redirects', { sourcePath: '^/m/(?:a)(b)$', targetUrl: '/m2/$2', isRegex: true })).status).toBe(422);
    expect((await api.get('/v1/redirects/stats')).body.total).toBe(1);
  });

  it('refuses regex rules that map a path to itself or grow it for ever with 422 REDIRECT_LOOP, and a source with a newline', async () => {
    const api = await site();
    for (const [sourcePath, targetUrl] of [
      ['^/(.*)$', '/$1'],
      ['^/q(.*)$', '/qq$1'],
      ['^/blog/(.*)$', '/blog/posts/$1'],
      ['^/go/([a-z]+)$', '/go/$1'],
      ['^/p/(.*)$', 'https://example.test/p/$1'],
    ]) {
      const res = await api.post('/v1/redirects', { sourcePath, targetUrl, isRegex: true });
      expect(res.status, `${sourcePath} -> ${targetUrl}`).toBe(422);
      expectErrorShape(res.body, 422, 'REDIRECT_LOOP');
    }
    // Through another rule: /news/... -> /blog/... -> /news/...
    await create(api, { sourcePath: '^/news/(.*)$', targetUrl: '/blog/$1', isRegex: true });
    const back = await api.post('/v1/redirects', { sourcePath: '^/blog/(.*)$', targetUrl: '/news/$1', isRegex: true });
    expect(back.status).toBe(422);
    expectErrorShape(back.body, 422, 'REDIRECT_LOOP');
    // Rules that settle are fine.
    await create(api, { sourcePath: '^/old/(.*)$', targetUrl: '/new/$1', isRegex: true });
    await create(api, { sourcePath: '^/(.*)\\.html$', targetUrl: '/$1', isRegex: true });
    for (const [sourcePath, isRegex] of [
      ['/line\nbreak', false],
      ['/tab\there', false],
      ['^/a\nb$', true],
    ] as const) {
      const res = await api.post('/v1/redirects', { sourcePath, targetUrl: '/x', isRegex });
      expect(res.status, JSON.stringify(sourcePath)).toBe(422);
      expectErrorShape(res.body, 422, 'SOURCE_PATH_INVALID');
      expect(res.body.errors).toHaveProperty('sourcePath');
    }
    expect((await api.get('/v1/redirects/stats')).body.total).toBe(3);
  });
});

describe('loops and chains (decisions R2)', () => {
  it('refuses A->A and A->B->A with 422 REDIRECT_LOOP, also through an absolute URL on the site and a regex rule', async () => {
    const api = await site();
    const self = await api.post('/v1/redirects', { sourcePath: '/a', targetUrl: '/a/?utm=1' });
    expect(self.status).toBe(422);
    expectErrorShape(self.body, 422, 'REDIRECT_LOOP');
    expect(self.body.errors).toHaveProperty('targetUrl');

    await create(api, { sourcePath: '/a', targetUrl: '/b' });
    const back = await api.post('/v1/redirects', { sourcePath: '/b', targetUrl: 'https://example.test/a' });
    expect(back.status).toBe(422);
    expectErrorShape(back.body, 422, 'REDIRECT_LOOP');

    // A regex rule catching /b/... back to /a.
    await create(api, { sourcePath: '/c', targetUrl: '/b/deep' });
    const viaRegex = await api.post('/v1/redirects', { sourcePath: '^/b/(.*)$', targetUrl: '/c', isRegex: true });
    expect(viaRegex.status).toBe(422);
    expectErrorShape(viaRegex.body, 422, 'REDIRECT_LOOP');

    // An external target ends a chain: /b -> another host is fine.
    expect((await api.post('/v1/redirects', { sourcePath: '/b', targetUrl: 'https://elsewhere.test/a' })).status).toBe(201);
  });

  it('allows a chain of 5 redirects and refuses a 6th hop at either end with 422 REDIRECT_CHAIN_TOO_LONG', async () => {
    const api = await site();
    for (let i = 1; i <= 4; i++) await create(api, { sourcePath: `/p${i}`, targetUrl: `/p${i + 1}` });
    // p1 -> p2 -> p3 -> p4 -> p5 is 4 hops; p5 -> p6 makes 5.
    await create(api, { sourcePath: '/p5', targetUrl: '/p6' });
    const after = await api.post('/v1/redirects', { sourcePath: '/p6', targetUrl: '/p7' });
    expect(after.status).toBe(422);
    expectErrorShape(after.body, 422, 'REDIRECT_CHAIN_TOO_LONG');
    const before = await api.post('/v1/redirects', { sourcePath: '/p0', targetUrl: '/p1' });
    expect(before.status).toBe(422);
    expectErrorShape(before.body, 422, 'REDIRECT_CHAIN_TOO_LONG');
    // An inactive rule is no hop: it may be stored, and turning it on is checked.
    const parked = await create(api, { sourcePath: '/p6', targetUrl: '/p7', isActive: false });
    const toggled = await api.post(`/v1/redirects/${parked.id}/toggle`);
    expect(toggled.status).toBe(422);
    expectErrorShape(toggled.body, 422, 'REDIRECT_CHAIN_TOO_LONG');
    expect((await api.get(`/v1/redirects/${parked.id}`)).body.data.isActive).toBe(false);
  });

  it('checks updates the same way, and a failed update changes nothing', async () => {
    const api = await site();
    const a = await create(api, { sourcePath: '/x', targetUrl: '/y' });
    const b = await create(api, { sourcePath: '/y', targetUrl: '/z' });
    const res = await api.put(`/v1/redirects/${b.id}`, { targetUrl: '/x', note: 'would loop' });
    expect(res.status).toBe(422);
    expectErrorShape(res.body, 422, 'REDIRECT_LOOP');
    expect((await api.get(`/v1/redirects/${b.id}`)).body.data).toMatchObject({ targetUrl: '/z', note: null });
    expect((await api.put(`/v1/redirects/${a.id}`, { sourcePath: '/y' })).body.code).toBe('SOURCE_PATH_TAKEN');
  });
});

describe('update, toggle, delete, bulk delete, stats', () => {
  it('updates only the fields sent, flips isActive, deletes with a message', async () => {
    const api = await site();
    const r = await create(api, { sourcePath: '/u', targetUrl: '/v', note: 'keep' });
    const upd = await api.put(`/v1/redirects/${r.id}`, { statusCode: 302, preserveQueryString: true });
    expect(upd.status).toBe(200);
    expect(upd.body.data).toMatchObject({ sourcePath: '/u', targetUrl: '/v', statusCode: 302, preserveQueryString: true, note: 'keep' });
    expect((await api.put(`/v1/redirects/${r.id}`, {})).status).toBe(422);
    const off = await api.post(`/v1/redirects/${r.id}/toggle`);
    expect(off.status).toBe(200);
    expect(off.body.data.isActive).toBe(false);
    expect((await api.post(`/v1/redirects/${r.id}/toggle`)).body.data.isActive).toBe(true);
    const del = await api.delete(`/v1/redirects/${r.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: expect.any(String) });
    expect((await api.get(`/v1/redirects/${r.id}`)).status).toBe(404);
    expect((await api.delete(`/v1/redirects/${r.id}`)).status).toBe(404);
  });

  it('bulk-deletes 1-50 ids, counting only this site’s existing ones once', async () => {
    const api = await site();
    const other = await site();
    const mine = [await create(api, { sourcePath: '/b1', targetUrl: '/t' }), await create(api, { sourcePath: '/b2', targetUrl: '/t' })];
    const theirs = await create(other, { sourcePath: '/b1', targetUrl: '/t' });
    const res = await api.post('/v1/redirects/bulk-delete', { ids: [mine[0].id, mine[0].id, mine[1].id, theirs.id, 999_999] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: 2 });
    expect((await other.get(`/v1/redirects/${theirs.id}`)).status).toBe(200);
    for (const ids of [[], Array.from({ length: 51 }, (_, i) => i + 1)]) {
      const bad = await api.post('/v1/redirects/bulk-delete', { ids });
      expect(bad.status).toBe(422);
      expect(bad.body.errors).toHaveProperty('ids');
    }
  });

  it('answers stats as a bare object, and lists with filters, search and sorting', async () => {
    const api = await site();
    await create(api, { sourcePath: '/s1', targetUrl: '/t1' });
    await create(api, { sourcePath: '/s2', targetUrl: '/t2', isActive: false, statusCode: 302 });
    await create(api, { sourcePath: '^/s3/(.*)$', targetUrl: '/t3/$1', isRegex: true, note: 'campaign' });
    await api.get('/v1/redirects/resolve?path=/s1');
    await api.get('/v1/redirects/resolve?path=/s1');
    await api.get('/v1/redirects/resolve?path=/s3/x');
    expect((await api.get('/v1/redirects/stats')).body).toEqual({ total: 3, active: 2, inactive: 1, totalHits: 3 });
    const all = await api.get('/v1/redirects?sortBy=hit_count&sortOrder=desc');
    expect(all.body.meta).toEqual({ total: 3, perPage: 15, currentPage: 1, lastPage: 1 });
    expect(all.body.data.map((r: any) => [r.sourcePath, r.hitCount])).toEqual([
      ['/s1', 2],
      ['^/s3/(.*)$', 1],
      ['/s2', 0],
    ]);
    expect((await api.get('/v1/redirects?isActive=false')).body.data.map((r: any) => r.sourcePath)).toEqual(['/s2']);
    expect((await api.get('/v1/redirects?isRegex=true')).body.data.map((r: any) => r.sourcePath)).toEqual(['^/s3/(.*)$']);
    expect((await api.get('/v1/redirects?statusCode=302')).body.data.map((r: any) => r.sourcePath)).toEqual(['/s2']);
    expect((await api.get('/v1/redirects?search=CAMPAIGN')).body.data.map((r: any) => r.sourcePath)).toEqual(['^/s3/(.*)$']);
    expect((await api.get('/v1/redirects?sortBy=bogus')).status).toBe(422);
    expect((await api.get('/v1/redirects?limit=101')).status).toBe(422);
  });
});

describe('match and resolve (decisions R1, R2)', () => {
  it('prefers an exact rule over a regex one, tries regex rules oldest first, and match never counts', async () => {
    const api = await site();
    const regexA = await create(api, { sourcePath: '^/blog/(.*)$', targetUrl: '/news/$1', isRegex: true });
    await create(api, { sourcePath: '^/blog/special$', targetUrl: '/never', isRegex: true });
    const exact = await create(api, { sourcePath: '/blog/pinned', targetUrl: '/pinned' });
    expect((await api.get('/v1/redirects/match?path=/blog/pinned')).body.data.id).toBe(exact.id);
    expect((await api.get('/v1/redirects/match?path=/blog/special')).body.data.id).toBe(regexA.id);
    const miss = await api.get('/v1/redirects/match?path=/nothing');
    expect(miss.status).toBe(404);
    expectErrorShape(miss.body, 404);
    expect((await api.get('/v1/redirects/stats')).body.totalHits).toBe(0);
    expect((await api.get('/v1/redirects/not-found')).body.meta.total).toBe(0);
  });

  it('applies capture groups and the query string, counts the hit and logs who asked', async () => {
    const api = await site();
    const rule = await create(api, {
      sourcePath: '^/shop/([a-z]+)/(\\d+)$',
      targetUrl: 'https://store.test/$2?cat=$1',
      isRegex: true,
      statusCode: 308,
      preserveQueryString: true,
    });
    const res = await api.get(
      '/v1/redirects/resolve?path=%2Fshop%2Fshoes%2F42%3Fref%3Dmail&referrer=https%3A%2F%2Fsearch.test%2F&userAgent=Bot%2F1.0&ip=203.0.113.77',
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { redirectId: rule.id, targetUrl: 'https://store.test/42?cat=shoes&ref=mail', statusCode: 308 } });
    const got = (await api.get(`/v1/redirects/${rule.id}`)).body.data;
    expect(got.hitCount).toBe(1);
    expect(Date.parse(got.lastHitAt)).toBeGreaterThan(Date.now() - 60_000);
    const logs = await api.get(`/v1/redirects/${rule.id}/logs`);
    expect(logs.body.meta.total).toBe(1);
    // Addresses are anonymised by default: the last octet is zeroed.
    expect(logs.body.data[0]).toEqual({
      id: expect.any(Number),
      redirectId: rule.id,
      referrer: 'https://search.test/',
      userAgent: 'Bot/1.0',
      ipAddress: '203.0.113.0',
      createdAt: expect.any(String),
    });
    // Without forwarded values, the request's own headers and address are logged; no query string is kept when the rule drops it.
    const plain = await create(api, { sourcePath: '/plain/', targetUrl: '/dest' });
    const hit = await api.get('/v1/redirects/resolve?path=/plain?x=1', { referer: 'https://r.test/', 'user-agent': 'Mozilla/5.0' });
    expect(hit.body.data.targetUrl).toBe('/dest');
    const log = (await api.get(`/v1/redirects/${plain.id}/logs`)).body.data[0];
    expect(log).toMatchObject({ referrer: 'https://r.test/', userAgent: 'Mozilla/5.0', ipAddress: '127.0.0.0' });
  });

  it('keeps whole addresses when the site turns anonymisation off, and cuts IPv6 to 48 bits when on', async () => {
    const api = await site();
    const rule = await create(api, { sourcePath: '/ip', targetUrl: '/dest' });
    await api.get('/v1/redirects/resolve?path=/ip&ip=2001:db8:85a3:1234:5678:8a2e:370:7334');
    const settings = await api.put('/v1/redirects/settings', { anonymizeIp: false });
    expect(settings.status).toBe(200);
    expect(settings.body.data).toEqual({ logRetentionDays: 90, anonymizeIp: false, redirectOnSlugChange: false });
    await api.get('/v1/redirects/resolve?path=/ip&ip=198.51.100.23');
    const logs = (await api.get(`/v1/redirects/${rule.id}/logs`)).body.data.map((l: any) => l.ipAddress);
    expect(logs).toEqual(['198.51.100.23', '2001:db8:85a3::']);
    expect((await api.put('/v1/redirects/settings', { logRetentionDays: -1 })).status).toBe(422);
    expect((await api.put('/v1/redirects/settings', {})).status).toBe(422);
  });

  it('records misses in the 404 log, most frequent first, and turns an entry into a redirect', async () => {
    const api = await site();
    for (const path of ['/gone', '/gone?utm=1', '/gone/', '/lost', '/gone']) {
      const res = await api.get(`/v1/redirects/resolve?path=${encodeURIComponent(path)}&referrer=https://ref.test/`);
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404);
    }
    const log = await api.get('/v1/redirects/not-found');
    expect(log.body.data.map((e: any) => [e.path, e.hits])).toEqual([
      ['/gone', 4],
      ['/lost', 1],
    ]);
    expect(log.body.data[0]).toMatchObject({ lastReferrer: 'https://ref.test/', firstSeenAt: expect.any(String), lastSeenAt: expect.any(String) });
    const made = await api.post(`/v1/redirects/not-found/${log.body.data[0].id}/redirect`, { targetUrl: '/found', statusCode: 302 });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ sourcePath: '/gone', targetUrl: '/found', statusCode: 302, isRegex: false });
    expect((await api.get('/v1/redirects/resolve?path=/gone')).body.data.targetUrl).toBe('/found');
    expect((await api.get('/v1/redirects/not-found')).body.data.map((e: any) => e.path)).toEqual(['/lost']);
    const lost = (await api.get('/v1/redirects/not-found')).body.data[0];
    expect((await api.delete(`/v1/redirects/not-found/${lost.id}`)).status).toBe(200);
    expect((await api.get('/v1/redirects/not-found')).body.meta.total).toBe(0);
    expect((await api.delete(`/v1/redirects/not-found/${lost.id}`)).status).toBe(404);
  });

  it('searches the 404 log case-insensitively, with LIKE wildcards taken literally, on both databases', async () => {
    const api = await site();
    for (const path of ['/Old-Page', '/other', '/100%_off']) await api.get(`/v1/redirects/resolve?path=${encodeURIComponent(path)}`);
    const find = async (q: string) => (await api.get(`/v1/redirects/not-found?search=${encodeURIComponent(q)}`)).body.data.map((e: any) => e.path);
    expect(await find('old-PAGE')).toEqual(['/Old-Page']);
    expect(await find('%_')).toEqual(['/100%_off']);
  });

  it('never lets a catastrophic pattern slow a resolve: ^(a+)+$ against 10,000 a and a ! answers in under 10 ms', async () => {
    const api = await site();
    await create(api, { sourcePath: '^/(a+)+$', targetUrl: '/x', isRegex: true });
    const path = `/${'a'.repeat(10_000)}!`;
    // Best of five: a backtracking engine would take seconds every time; the best run leaves out
    // the scheduling noise of a machine running other test files at once.
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const start = process.hrtime.bigint();
      const res = await api.get(`/v1/redirects/resolve?path=${path}`);
      best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
      expect(res.status).toBe(404);
    }
    expect(best).toBeLessThan(10);
    // The matcher alone, without the HTTP path around it (best of five too).
    const rules = new RuleSet([{ id: 1, sourcePath: '^/(a+)+$', targetUrl: '/x', statusCode: 301, isRegex: true, preserveQueryString: false }]);
    let bestMatch = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const start = process.hrtime.bigint();
      expect(rules.match(path)).toBeNull();
      bestMatch = Math.min(bestMatch, Number(process.hrtime.bigint() - start) / 1e6);
    }
    expect(bestMatch).toBeLessThan(10);
    expect((await api.get(`/v1/redirects/resolve?path=/${'a'.repeat(10_000)}`)).status).toBe(200);
  });

  it('lets a delivery token resolve but not read the rules', async () => {
    const api = await site();
    await create(api, { sourcePath: '/d', targetUrl: '/e' });
    const delivery = await createTokenFor(ctx.app, api.siteId, { kind: 'delivery', scopes: ['contents.view'] });
    const front = client(ctx.app, delivery.token);
    expect((await front.get('/v1/redirects/resolve?path=/d')).body.data.targetUrl).toBe('/e');
    expect((await front.get('/v1/redirects')).status).toBe(403);
    expect((await front.get('/v1/redirects/match?path=/d')).status).toBe(403);
  });
});

describe('GET /v1/public/redirects/resolve (decisions G19, G20)', () => {
  it('resolves with the site key in the header or the query, uncached, and 401 without a valid key', async () => {
    const api = await site();
    await create(api, { sourcePath: '/pub', targetUrl: '/lic' });
    const key = await publicKeyOf(api);
    expect(key).toMatch(/^pk_/);
    const anon = client(ctx.app);
    const byHeader = await anon.get('/v1/public/redirects/resolve?path=/pub', { 'x-site-key': key });
    expect(byHeader.status).toBe(200);
    expect(byHeader.body.data.targetUrl).toBe('/lic');
    expect(byHeader.headers['cache-control']).toBe('no-store');
    expect((await anon.get(`/v1/public/redirects/resolve?path=/pub&siteKey=${key}`)).status).toBe(200);
    for (const headers of [{}, { 'x-site-key': 'pk_unknownunknownunknownunknown' }, { 'x-site-key': 'not-a-key' }] as Record<string, string>[]) {
      const res = await anon.get('/v1/public/redirects/resolve?path=/pub', headers);
      expect(res.status).toBe(401);
      expectErrorShape(res.body, 401, 'SITE_KEY_INVALID');
    }
    // Another site's key resolves that site's rules only.
    const other = await site();
    expect((await anon.get('/v1/public/redirects/resolve?path=/pub', { 'x-site-key': await publicKeyOf(other) })).status).toBe(404);
    expect((await api.get('/v1/redirects/stats')).body.totalHits).toBe(2);
  });

  it("lets the site's own origin read the answer (CORS) and no other", async () => {
    const api = await site();
    await create(api, { sourcePath: '/cors', targetUrl: '/ok' });
    const key = await publicKeyOf(api);
    const anon = client(ctx.app);
    const own = await anon.get('/v1/public/redirects/resolve?path=/cors', { 'x-site-key': key, origin: 'https://example.test' });
    expect(own.headers['access-control-allow-origin']).toBe('https://example.test');
    const foreign = await anon.get('/v1/public/redirects/resolve?path=/cors', { 'x-site-key': key, origin: 'https://evil.test' });
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    // The browser's preflight for the X-Site-Key header is answered.
    const preflight = await ctx.app.inject({
      method: 'OPTIONS',
      url: '/v1/public/redirects/resolve?path=/cors',
      headers: { origin: 'https://example.test', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-site-key' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://example.test');
    expect(String(preflight.headers['access-control-allow-headers'])).toContain('X-Site-Key');
  });
});

describe('import and export (decisions R1, F2)', () => {
  it('imports { entries }: stores the good rows, skips duplicates, names each bad row by number, never half a row', async () => {
    const api = await site();
    await create(api, { sourcePath: '/exists', targetUrl: '/x' });
    const res = await api.post('/v1/redirects/import', {
      entries: [
        { sourcePath: '/i1', targetUrl: '/t1' },
        { sourcePath: '/exists/', targetUrl: '/t2' },
        { sourcePath: '/i3', targetUrl: 'javascript:alert(1)' },
        { sourcePath: '/i4', targetUrl: '/t4', statusCode: 303 },
        { sourcePath: '/i1', targetUrl: '/dup-in-file' },
        { sourcePath: '/loop', targetUrl: '/loop' },
        { sourcePath: '^/re/(.*)$', targetUrl: '/t/$1', isRegex: true, statusCode: 302, preserveQueryString: true, note: 'from import' },
        { sourcePath: '/t1', targetUrl: '/i1' },
        'not an object',
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.imported).toBe(2);
    expect(res.body.skipped).toBe(2);
    expect(res.body.errorCount).toBe(5);
    expect(res.body.errors.map((e: any) => [e.row, e.field])).toEqual([
      [3, 'targetUrl'],
      [4, 'statusCode'],
      [6, 'targetUrl'],
      [8, 'targetUrl'],
      [9, undefined],
    ]);
    expect(res.body.errors[3].message).toMatch(/loop/);
    const list = (await api.get('/v1/redirects?sortBy=source_path&sortOrder=asc')).body.data;
    expect(list.map((r: any) => r.sourcePath)).toEqual(['/exists', '/i1', '^/re/(.*)$']);
    expect(list[2]).toMatchObject({ isRegex: true, statusCode: 302, preserveQueryString: true, note: 'from import' });
    expect((await api.get('/v1/redirects/resolve?path=/re/a')).body.data.targetUrl).toBe('/t/a');
  });

  it('keeps the target index of its checks: refused rows take their rule out, never the whole index (decisions HN19)', async () => {
    const api = await site();
    const held = Array.from({ length: 1000 }, (_, i) => ({ sourcePath: `/held/${i}`, targetUrl: `/kept/${i}` }));
    expect((await api.post('/v1/redirects/import', { entries: held })).body.imported).toBe(1000);
    // Every other row loops back (/kept/i -> /held/i -> /kept/i) and is refused; the row after it
    // points at that row's source (/chain/i -> /kept/i-1), a loop only if the refused row had stayed.
    const entries = Array.from({ length: 200 }, (_, i) =>
      i % 2 ? { sourcePath: `/chain/${i}`, targetUrl: `/kept/${i - 1}` } : { sourcePath: `/kept/${i}`, targetUrl: `/held/${i}` },
    );
    // The index was dropped at each refused row and built again over every rule on the next
    // check (RuleSet.all each time): one block of the event loop per refused row, over the site.
    const all = vi.spyOn(RuleSet.prototype, 'all');
    try {
      const res = await api.post('/v1/redirects/import', { entries });
      expect(res.body.imported).toBe(100);
      expect(res.body.errorCount).toBe(100);
      expect(new Set(res.body.errors.map((e: any) => e.row % 2))).toEqual(new Set([1]));
      expect(all).not.toHaveBeenCalled();
    } finally {
      all.mockRestore();
    }
    expect((await api.get('/v1/redirects/resolve?path=/chain/1')).body.data.targetUrl).toBe('/kept/0');
  });

  it('takes a rule out of a rule set with its place in the target index, and finds an updated rule by id (decisions HN19)', () => {
    const rule = (id: number, sourcePath: string, targetUrl: string, isRegex = false) => ({
      id,
      sourcePath,
      targetUrl,
      statusCode: 301,
      isRegex,
      preserveQueryString: false,
    });
    const a = rule(1, '/a', '/b');
    const c = rule(2, '/c', 'https://example.com/b/');
    const r = rule(3, '^/r/(.*)$', '/b', true);
    const set = new RuleSet([a, c, r], 'example.com');
    expect(set.targetingKey('/b', 'example.com')).toEqual([a, c, r]);
    set.delete(a);
    expect(set.targetingKey('/b', 'example.com')).toEqual([c, r]);
    expect(set.match('/a')).toBeNull();
    set.remove(3);
    expect(set.targetingKey('/b', 'example.com')).toEqual([c]);
    expect(set.match('/r/x')).toBeNull();
    expect(set.match('/c')?.targetUrl).toBe('https://example.com/b/');
  });

  it('checks before its transaction; a rule written between the check and the transaction makes it check again (decisions HN17)', async () => {
    const api = await site();
    await create(api, { sourcePath: '/kept', targetUrl: '/k' });
    // After the check, before the transaction: a rule that turns row 1 into a loop, and row 2's source.
    importSeams.afterCheck = async () => {
      importSeams.afterCheck = null;
      await create(api, { sourcePath: '/b', targetUrl: '/a' });
      await create(api, { sourcePath: '/c', targetUrl: '/x' });
    };
    try {
      const res = await api.post('/v1/redirects/import', {
        entries: [
          { sourcePath: '/a', targetUrl: '/b' },
          { sourcePath: '/c', targetUrl: '/d' },
          { sourcePath: '/e', targetUrl: '/f' },
        ],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ imported: 1, skipped: 1, errorCount: 1 });
      expect(res.body.errors.map((e: any) => [e.row, e.field])).toEqual([[1, 'targetUrl']]);
      expect(res.body.errors[0].message).toMatch(/loop/);
    } finally {
      importSeams.afterCheck = null;
    }
    const list = (await api.get('/v1/redirects?sortBy=source_path&sortOrder=asc')).body.data;
    expect(list.map((r: any) => [r.sourcePath, r.targetUrl])).toEqual([
      ['/b', '/a'],
      ['/c', '/x'],
      ['/e', '/f'],
      ['/kept', '/k'],
    ]);
  });

  it("keeps each site's rules version once it imports: one more per rule inserted, updated or deleted, none for a hit (migration 0047)", async () => {
    const api = await site();
    const other = await site();
    const version = async (siteId: string) =>
      (await sql<{ version: number | string }>`select version from redirect_rule_versions where site_id = ${siteId}`.execute(ctx.app.database.db)).rows.map(
        (r) => Number(r.version),
      );
    const siteId = (await api.get('/v1/site/info')).body.data.id;
    const otherId = (await other.get('/v1/site/info')).body.data.id;
    const rule = await create(api, { sourcePath: '/v1', targetUrl: '/one' });
    // No row until the site's first import makes it (at 0), then its row counts.
    expect(await version(siteId)).toEqual([]);
    expect((await api.post('/v1/redirects/import', { entries: [{ sourcePath: '/v2', targetUrl: '/t' }] })).body.imported).toBe(1);
    expect(await version(siteId)).toEqual([1]);
    await create(api, { sourcePath: '/v3', targetUrl: '/t' });
    expect(await version(siteId)).toEqual([2]);
    expect((await api.put(`/v1/redirects/${rule.id}`, { targetUrl: '/two' })).status).toBe(200);
    expect(await version(siteId)).toEqual([3]);
    // A hit moves the counter, not the version.
    expect((await api.get('/v1/redirects/resolve?path=/v1')).status).toBe(200);
    expect((await api.get(`/v1/redirects/${rule.id}`)).body.data.hitCount).toBe(1);
    expect(await version(siteId)).toEqual([3]);
    const imported = await api.post('/v1/redirects/import', {
      entries: [
        { sourcePath: '/v4', targetUrl: '/t' },
        { sourcePath: '/v5', targetUrl: '/t' },
      ],
    });
    expect(imported.body.imported).toBe(2);
    expect(await version(siteId)).toEqual([5]);
    expect((await api.delete(`/v1/redirects/${rule.id}`)).status).toBe(200);
    expect(await version(siteId)).toEqual([6]);
    expect(await version(otherId)).toEqual([]);
    // A site deleted with its rules (a bundle import's dry run does it): the triggers make no row for it.
    await ctx.app.database.db.deleteFrom('sites').where('id', '=', siteId).execute();
    expect(await version(siteId)).toEqual([]);
  });

  it('lists at most 1,000 errors, counts them all, and refuses more than 10,000 rows', async () => {
    const api = await site();
    const entries = Array.from({ length: 1500 }, (_, i) => ({ sourcePath: `bad-${i}`, targetUrl: '/t' }));
    const res = await api.post('/v1/redirects/import', { entries });
    expect(res.body).toMatchObject({ imported: 0, skipped: 0, errorCount: 1500 });
    expect(res.body.errors).toHaveLength(1000);
    const big = await api.post('/v1/redirects/import', { entries: Array.from({ length: 10_001 }, (_, i) => ({ sourcePath: `/b${i}`, targetUrl: '/t' })) });
    expect(big.status).toBe(422);
    expect(big.body.errors).toHaveProperty('entries');
    expect((await api.post('/v1/redirects/import', { entries: [] })).status).toBe(422);
  });

  it('imports a CSV file (multipart), with quoted fields, a BOM and either header style', async () => {
    const api = await site();
    const csv =
      '\uFEFFsource_path,target_url,status_code,is_regex,is_active,preserve_query_string,note\r\n' +
      '/c1,/d1,302,false,true,true,"a note, with a comma"\r\n' +
      '"/c2","https://example.test/d2?a=1&b=2",,,,,\r\n' +
      '/c3,/d3,999,,,,\r\n' +
      '^/c4/(\\d+)$,/d4/$1,,yes,,,\r\n';
    const { payload, headers } = multipart('redirects.csv', csv);
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/redirects/import', payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ imported: 3, skipped: 0, errorCount: 1, errors: [{ row: 3, field: 'statusCode' }] });
    const c1 = (await api.get('/v1/redirects/match?path=/c1')).body.data;
    expect(c1).toMatchObject({ targetUrl: '/d1', statusCode: 302, preserveQueryString: true, note: 'a note, with a comma' });
    expect((await api.get('/v1/redirects/resolve?path=/c4/7')).body.data.targetUrl).toBe('/d4/7');
    const camel = multipart('r.csv', 'sourcePath,targetUrl\n/c5,/d5\n');
    const again = await ctx.app.inject({
      method: 'POST',
      url: '/v1/redirects/import',
      payload: camel.payload,
      headers: { ...camel.headers, authorization: `Bearer ${api.token}` },
    });
    expect(again.json()).toMatchObject({ imported: 1 });
    const noHeader = multipart('r.csv', '/c6,/d6\n');
    const bad = await ctx.app.inject({
      method: 'POST',
      url: '/v1/redirects/import',
      payload: noHeader.payload,
      headers: { ...noHeader.headers, authorization: `Bearer ${api.token}` },
    });
    expect(bad.statusCode).toBe(422);
    expectErrorShape(bad.json(), 422, 'IMPORT_FILE_INVALID');
    expect((await api.get('/v1/redirects/stats')).body.total).toBe(4);
  });

  it('exports CSV with the spec columns (formulas neutralised) that imports back, and nginx and Apache rules', async () => {
    const api = await site();
    await create(api, { sourcePath: '/e1', targetUrl: '/f1', statusCode: 302 });
    await create(api, { sourcePath: '@evil', targetUrl: '/f2', isRegex: true });
    await create(api, { sourcePath: '^/e3/(.*)$', targetUrl: '/f3/$1', isRegex: true, preserveQueryString: true });
    await create(api, { sourcePath: '/e4', targetUrl: '/f4', isActive: false });
    await api.get('/v1/redirects/resolve?path=/e1');
    const csv = await api.get('/v1/redirects/export');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toContain('attachment');
    const lines = csv.text.split('\r\n');
    expect(lines[0]).toBe('source_path,target_url,status_code,is_regex,is_active,hit_count,preserve_query_string');
    expect(lines.slice(1, 5)).toEqual([
      '/e1,/f1,302,false,true,1,false',
      "'@evil,/f2,301,true,true,0,false",
      '^/e3/(.*)$,/f3/$1,301,true,true,0,true',
      '/e4,/f4,301,false,false,0,false',
    ]);

    const other = await site();
    const { payload, headers } = multipart('export.csv', csv.text);
    const back = await ctx.app.inject({
      method: 'POST',
      url: '/v1/redirects/import',
      payload,
      headers: { ...headers, authorization: `Bearer ${other.token}` },
    });
    expect(back.json()).toMatchObject({ imported: 4, errorCount: 0 });
    expect((await other.get('/v1/redirects/match?path=/e4')).status).toBe(404);
    expect((await other.get('/v1/redirects?isActive=false')).body.data[0].sourcePath).toBe('/e4');

    const nginx = (await api.get('/v1/redirects/export?format=nginx')).text;
    expect(nginx).toContain('map $uri $cairn_redirect_302 {');
    expect(nginx).toContain('    "/e1" "/f1";');
    expect(nginx).toContain('    "~^/e3/(.*)$" "/f3/$1$is_args$args";');
    expect(nginx).toContain('if ($cairn_redirect_301) { return 301 $cairn_redirect_301; }');
    expect(nginx).not.toContain('/e4');
    const apache = (await api.get('/v1/redirects/export?format=apache')).text;
    expect(apache).toContain('RewriteEngine On');
    expect(apache).toContain('RewriteRule ^/?e1/?$ /f1 [R=302,L,QSD]');
    expect(apache).toContain('RewriteRule ^/?e3/(.*)$ /f3/$1 [R=301,L,QSA]');
    expect((await api.get('/v1/redirects/export?format=xml')).status).toBe(422);
  });
});

describe('compiled rules across instances (decisions R5)', () => {
  it('an instance on its own connection sees a rule created through another at once', async () => {
    const api = await site();
    await create(api, { sourcePath: '/first', targetUrl: '/one' });
    const second = connectDatabase({ databaseUrl: ctx.config.databaseUrl, pgSchema: ctx.config.pgSchema });
    const two = await buildTestApp({}, { database: second, migrate: false });
    try {
      const other = client(two.app, api.token);
      // Instance two compiles the site's rules now...
      expect((await other.get('/v1/redirects/resolve?path=/first')).status).toBe(200);
      expect((await other.get('/v1/redirects/resolve?path=/second')).status).toBe(404);
      // ... and a rule made through instance one reaches it without a restart.
      await create(api, { sourcePath: '/second', targetUrl: '/two' });
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await other.get('/v1/redirects/resolve?path=/second')).status;
      }
      expect(status).toBe(200);
    } finally {
      await two.close();
      await second.close();
    }
  });
});

describe('log retention (decisions R8)', () => {
  const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();

  it("purges hit logs and 404 entries past each site's retention, and keeps them for ever at 0", async () => {
    const db = ctx.app.database.db;
    const sites = { standard: await site(), short: await site(), forever: await site() };
    expect((await sites.short.put('/v1/redirects/settings', { logRetentionDays: 7 })).status).toBe(200);
    expect((await sites.forever.put('/v1/redirects/settings', { logRetentionDays: 0 })).status).toBe(200);
    const ages: Record<keyof typeof sites, number[]> = { standard: [91, 89], short: [8, 6], forever: [1000] };
    const rules: Record<string, number> = {};
    for (const [name, api] of Object.entries(sites)) {
      rules[name] = (await create(api, { sourcePath: '/kept', targetUrl: '/t' })).id;
      for (const _ of ages[name as keyof typeof sites]) await api.get('/v1/redirects/resolve?path=/kept');
      await api.get('/v1/redirects/resolve?path=/missing');
      // Flushed by this read; then each log row and the 404 entry is aged.
      const logs = (await api.get(`/v1/redirects/${rules[name]}/logs?sortOrder=asc`)).body.data;
      for (const [i, age] of ages[name as keyof typeof sites].entries()) {
        await db
          .updateTable('redirect_logs')
          .set({ created_at: daysAgo(age) })
          .where('id', '=', logs[i].id)
          .execute();
      }
      await db
        .updateTable('redirect_misses')
        .set({ last_seen_at: daysAgo(Math.max(...ages[name as keyof typeof sites])) })
        .where('site_id', '=', api.siteId)
        .execute();
    }
    await ctx.app.worker.tick();
    const left = async (name: keyof typeof sites) => (await sites[name].get(`/v1/redirects/${rules[name]}/logs`)).body.meta.total;
    const misses = async (name: keyof typeof sites) => (await sites[name].get('/v1/redirects/not-found')).body.meta.total;
    expect(await left('standard')).toBe(1);
    expect(await left('short')).toBe(1);
    expect(await left('forever')).toBe(1);
    expect(await misses('standard')).toBe(0);
    expect(await misses('short')).toBe(0);
    expect(await misses('forever')).toBe(1);
    // The counters are not logs: they stay.
    expect((await sites.standard.get(`/v1/redirects/${rules.standard}`)).body.data.hitCount).toBe(2);
  });
});

describe('RedirectCache bounds', () => {
  it('holds at most its rule budget, least recently used out first, and always the site asked for', async () => {
    const db = ctx.app.database.db;
    const sites = [await site(), await site(), await site()];
    for (const [i, api] of sites.entries()) {
      for (let n = 0; n < 2 + i; n++) await create(api, { sourcePath: `/c${n}`, targetUrl: '/t' });
    }
    const cache = new RedirectCache(db, 10, 5);
    const held = (s: Api) => (cache as unknown as { sites: Map<string, unknown> }).sites.has(s.siteId);
    expect((await cache.get(sites[0]!.siteId)).rules.size).toBe(2);
    expect((await cache.get(sites[1]!.siteId)).rules.size).toBe(3);
    await new Promise((r) => setImmediate(r));
    expect([held(sites[0]!), held(sites[1]!)]).toEqual([true, true]);
    // 2 + 3 + 4 rules is over the budget of 5: the least recently used go first.
    expect((await cache.get(sites[2]!.siteId)).rules.size).toBe(4);
    await new Promise((r) => setImmediate(r));
    expect(sites.map(held)).toEqual([false, false, true]);
    cache.forget(sites[2]!.siteId);
    expect(held(sites[2]!)).toBe(false);
  });
});

describe('redirects on URL changes of published contents (decisions R11)', () => {
  async function post(api: Api, body: Record<string, unknown>) {
    const res = await api.post('/v1/contents', { type: 'post', title: 'A post', bodyMarkdown: 'Text.', ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data ?? res.body;
  }
  const resolve = async (api: Api, path: string) => {
    const res = await api.get(`/v1/redirects/resolve?path=${encodeURIComponent(path)}`);
    return res.status === 200 ? res.body.data.targetUrl : res.status;
  };

  it('creates nothing unless the site turns it on, and never for a content that is not published', async () => {
    const api = await site();
    const c = await post(api, { slug: 'first', status: 'published' });
    expect((await api.put(`/v1/contents/${c.id}`, { slug: 'second' })).status).toBe(200);
    await ctx.app.worker.runDueJobs();
    expect((await api.get('/v1/redirects/stats')).body.total).toBe(0);
    await api.put('/v1/redirects/settings', { redirectOnSlugChange: true });
    const draft = await post(api, { slug: 'draft-one' });
    await api.put(`/v1/contents/${draft.id}`, { slug: 'draft-two' });
    await ctx.app.worker.runDueJobs();
    expect((await api.get('/v1/redirects/stats')).body.total).toBe(0);
  });

  it('redirects the old URL to the new one with a 301, follows a rename back without a loop, and keeps chains short', async () => {
    const api = await site();
    await api.put('/v1/redirects/settings', { redirectOnSlugChange: true });
    const c = await post(api, { slug: 'lisbon', status: 'published' });
    // An older rule pointing at the post's URL.
    await create(api, { sourcePath: '/old-lisbon', targetUrl: '/blog/lisbon' });
    await api.put(`/v1/contents/${c.id}`, { slug: 'lisbon-guide' });
    await ctx.app.worker.runDueJobs();
    const made = (await api.get('/v1/redirects/match?path=/blog/lisbon')).body.data;
    expect(made).toMatchObject({ sourcePath: '/blog/lisbon', targetUrl: '/blog/lisbon-guide', statusCode: 301, isRegex: false, isActive: true });
    expect(await resolve(api, '/old-lisbon')).toBe('/blog/lisbon-guide');
    // Renamed back: the live URL no longer redirects, the other one now does.
    await api.put(`/v1/contents/${c.id}`, { slug: 'lisbon' });
    await ctx.app.worker.runDueJobs();
    expect(await resolve(api, '/blog/lisbon')).toBe(404);
    expect(await resolve(api, '/blog/lisbon-guide')).toBe('/blog/lisbon');
    expect(await resolve(api, '/old-lisbon')).toBe('/blog/lisbon');
  });

  it('builds both URLs with the site settings: locale prefix, blog prefix, category path in nested mode', async () => {
    const api = await site(['en', 'de']);
    await api.put('/v1/redirects/settings', { redirectOnSlugChange: true });
    await api.put('/v1/seo/settings', { blogUrlMode: 'nested', blogPrefix: 'journal' });
    const europe = (await api.post('/v1/categories', { name: 'Europe', slug: 'europe' })).body.data;
    const travel = (await api.post('/v1/categories', { name: 'Travel', slug: 'travel' })).body.data;
    const portugal = (await api.post('/v1/categories', { name: 'Portugal', slug: 'portugal', parentId: europe.id })).body.data;
    const c = await post(api, { slug: 'porto', locale: 'de', status: 'published', categoryIds: [portugal.id] });
    await api.put(`/v1/contents/${c.id}`, { categoryIds: [travel.id, portugal.id] });
    await ctx.app.worker.runDueJobs();
    expect(await resolve(api, '/de/journal/europe/portugal/porto')).toBe('/de/journal/travel/porto');
  });
});
