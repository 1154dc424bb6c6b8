import { describe, expect, it } from 'vitest';
import { createTokenFor } from '../../../test/helpers/app.js';
import { client, expect422, expectErrorShape, ISO_TIMESTAMP } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { ALL_SCOPES } from '../../shared/scopes.js';

const ctx = useTestApp();
const DAY_MS = 86_400_000;
/** The secret of a token value `cairn_<id, 32 hex>_<secret>`: everything after the id (the secret's base64url may hold '_' itself). */
const secretOf = (token: string) => token.slice('cairn_'.length + 32 + 1);

/** The site's token rows, counted in the database: a refused request must leave it unchanged. */
async function tokenCount(siteId: string): Promise<number> {
  const row = await ctx.app.database.db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function storedRow(id: string) {
  return ctx.app.database.db.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** A token of the site's owner holding exactly `scopes`, as a client. */
async function tokenWith(siteId: string, scopes: string[]) {
  const t = await createTokenFor(ctx.app, siteId, { scopes });
  return Object.assign(client(ctx.app, t.token), { tokenId: t.tokenId, token: t.token });
}

describe('POST /v1/api-tokens', () => {
  it('creates a token (201) whose value works at once and is shown only in that answer (check 1)', async () => {
    const api = await ctx.site();
    const res = await api.post('/v1/api-tokens', { name: 'Deploy hook', description: 'CI', scopes: ['tags.view', 'tags.create'] });
    expect(res.status).toBe(201);
    const t = res.body.data;
    expect(t).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Deploy hook',
      description: 'CI',
      kind: 'management',
      scopes: ['tags.view', 'tags.create'],
      effectiveScopes: ['tags.view', 'tags.create'],
      user: { id: api.userId, fullName: 'Site owner' },
      tokenPrefix: `cairn_${t.id.replace(/-/g, '').slice(0, 8)}`,
      status: 'active',
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      updatedAt: expect.stringMatching(ISO_TIMESTAMP),
      token: expect.stringMatching(/^cairn_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/),
    });
    const made = client(ctx.app, t.token);
    expect((await made.post('/v1/tags', { name: 'Made by the new token' })).status).toBe(201);
    expect((await made.get('/v1/categories')).status).toBe(403);

    const list = await api.get('/v1/api-tokens');
    expect(list.status).toBe(200);
    expect(list.body.meta.total).toBe(2);
    expect(JSON.stringify(list.body)).not.toContain(t.token);
    expect(JSON.stringify(list.body)).not.toContain(secretOf(t.token));
    const one = await api.get(`/v1/api-tokens/${t.id}`);
    expect(one.body.data).not.toHaveProperty('token');
    expect(one.body.data.name).toBe('Deploy hook');
    // Only the hash is stored, and the maker is recorded.
    const stored = await storedRow(t.id);
    expect(stored.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(secretOf(t.token));
    expect(stored.created_by_token_id).toBe(
      (await ctx.app.database.db.selectFrom('api_tokens').select('id').where('site_id', '=', api.siteId).orderBy('created_at').executeTakeFirstOrThrow()).id,
    );
  });

  it('sets expiresAt 7 days out for expiresInDays: 7, and a token past its expiry answers 401 TOKEN_EXPIRED (check 11)', async () => {
    const api = await ctx.site();
    const before = Date.now();
    const res = await api.post('/v1/api-tokens', { name: 'Week', scopes: ['tags.view'], expiresInDays: 7 });
    const after = Date.now();
    expect(res.status).toBe(201);
    const expiresAt = Date.parse(res.body.data.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 7 * DAY_MS);
    expect(expiresAt).toBeLessThanOrEqual(after + 7 * DAY_MS);
    expect((await client(ctx.app, res.body.data.token).get('/v1/tags')).status).toBe(200);

    const past = await createTokenFor(ctx.app, api.siteId, { scopes: ['tags.view'], expiresAt: new Date(Date.now() - 1000).toISOString() });
    const expired = await client(ctx.app, past.token).get('/v1/tags');
    expect(expired.status).toBe(401);
    expectErrorShape(expired.body, 401, 'TOKEN_EXPIRED');
    const listed = await api.get('/v1/api-tokens?status[]=expired');
    expect(listed.body.data.map((t: any) => [t.id, t.status])).toEqual([[past.tokenId, 'expired']]);
  });

  it('refuses a past expiresAt, both expiry fields, unknown scopes, neither scopes nor preset (422, nothing stored)', async () => {
    const api = await ctx.site();
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ name: 'x', scopes: ['tags.view'], expiresAt: new Date(Date.now() - 60_000).toISOString() }, ['expiresAt']],
      [{ name: 'x', scopes: ['tags.view'], expiresAt: new Date(Date.now() + DAY_MS).toISOString(), expiresInDays: 3 }, ['expiresInDays']],
      [{ name: 'x', scopes: ['tags.view', 'tags.fly', 'orders.teleport'] }, ['scopes[1]', 'scopes[2]']],
      [{ name: 'x' }, ['scopes']],
      [{ name: 'x', scopes: ['tags.view'], preset: 'read-only' }, ['scopes']],
      [{ name: 'x', scopes: ['tags.view'], expiresInDays: 3651 }, ['expiresInDays']],
      [{ name: '', scopes: ['tags.view'] }, ['name']],
    ];
    for (const [body, fields] of cases) expect422(await api.post('/v1/api-tokens', body), 'VALIDATION_FAILED', fields, JSON.stringify(body));
    expect(await tokenCount(api.siteId)).toBe(1);
  });

  it('refuses scopes the calling token does not hold: 403 SCOPE_ESCALATION naming them, nothing stored (check 3)', async () => {
    const api = await ctx.site();
    const weak = await tokenWith(api.siteId, ['api_tokens.create', 'contents.view']);
    const res = await weak.post('/v1/api-tokens', { name: 'Stronger', scopes: ['contents.view', 'contents.delete'] });
    expect(res.status).toBe(403);
    expectErrorShape(res.body, 403, 'SCOPE_ESCALATION');
    expect(res.body.message).toContain('contents.delete');
    expect(res.body.message).not.toContain('contents.view,');
    expect(await tokenCount(api.siteId)).toBe(2);
    // What it holds it may grant.
    expect((await weak.post('/v1/api-tokens', { name: 'Equal', scopes: ['contents.view'] })).status).toBe(201);
  });

  it("caps a token made for another user by that user's role (403 SCOPE_ESCALATION), and presets by the caller and the role", async () => {
    const api = await ctx.site();
    const roles = (await api.get('/v1/roles')).body.data;
    const author = roles.find((r: any) => r.slug === 'author');
    const user = (await api.post('/v1/users', { fullName: 'Ann Author', roleId: author.id })).body.data;
    const beyond = await api.post('/v1/api-tokens', { name: 'Too much', scopes: ['contents.view', 'contents.delete'], userId: user.id });
    expect(beyond.status).toBe(403);
    expectErrorShape(beyond.body, 403, 'SCOPE_ESCALATION');
    expect(beyond.body.message).toContain('contents.delete');
    expect(await tokenCount(api.siteId)).toBe(1);

    const full = await api.post('/v1/api-tokens', { name: 'All she may', preset: 'full-access', userId: user.id });
    expect(full.status).toBe(201);
    expect([...full.body.data.scopes].sort()).toEqual([...author.scopes].sort());
    expect(full.body.data.user).toEqual({ id: user.id, fullName: 'Ann Author' });
    const readOnly = await api.post('/v1/api-tokens', { name: 'Reader', preset: 'read-only' });
    expect([...readOnly.body.data.scopes].sort()).toEqual(ALL_SCOPES.filter((s) => s.endsWith('.view')).sort());
    const unknownUser = await api.post('/v1/api-tokens', { name: 'Nobody', scopes: ['tags.view'], userId: '00000000-0000-4000-8000-000000000000' });
    expect422(unknownUser, 'REFERENCE_INVALID', ['userId']);
  });

  it('keeps only the content read scopes on a delivery token (decisions G13)', async () => {
    const api = await ctx.site();
    const res = await api.post('/v1/api-tokens', { name: 'Front end', kind: 'delivery', scopes: ['contents.view', 'tags.view', 'tags.create', 'users.view'] });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ kind: 'delivery', scopes: ['contents.view', 'tags.view'] });
    expect((await client(ctx.app, res.body.data.token).post('/v1/tags', { name: 'x' })).status).toBe(403);
  });
});

describe('GET /v1/api-tokens', () => {
  it('lists active and expired tokens by default, filters by status, kind, user and name, newest first, paginated', async () => {
    const api = await ctx.site();
    // created_at has millisecond precision: each token is created in a later millisecond than the one before.
    const later = () => new Promise((resolve) => setTimeout(resolve, 3));
    await later();
    const a = (await api.post('/v1/api-tokens', { name: 'Alpha deploy', scopes: ['tags.view'] })).body.data;
    await later();
    const b = (await api.post('/v1/api-tokens', { name: 'Beta reader', kind: 'delivery', scopes: ['tags.view'] })).body.data;
    await later();
    const c = (await api.post('/v1/api-tokens', { name: 'Gamma deploy', scopes: ['tags.view'] })).body.data;
    expect((await api.delete(`/v1/api-tokens/${c.id}`)).status).toBe(200);
    const all = await api.get('/v1/api-tokens');
    expect(all.body.meta).toEqual({ total: 3, perPage: 15, currentPage: 1, lastPage: 1 });
    expect(all.body.data.map((t: any) => t.id).slice(0, 2)).toEqual([b.id, a.id]);
    expect((await api.get('/v1/api-tokens?status[]=revoked')).body.data.map((t: any) => [t.id, t.status])).toEqual([[c.id, 'revoked']]);
    expect((await api.get('/v1/api-tokens?kind=delivery')).body.data.map((t: any) => t.id)).toEqual([b.id]);
    expect((await api.get('/v1/api-tokens?search=DEPLOY')).body.data.map((t: any) => t.id)).toEqual([a.id]);
    expect((await api.get(`/v1/api-tokens?userId=${api.userId}&limit=2&page=2`)).body).toMatchObject({ meta: { total: 3, lastPage: 2 } });
    expect((await api.get('/v1/api-tokens?sortBy=name&sortOrder=asc')).body.data.map((t: any) => t.name)).toEqual([
      'Alpha deploy',
      'Beta reader',
      'management token',
    ]);
    expect((await api.get('/v1/api-tokens?sortBy=secret_hash')).status).toBe(422);
  });

  it("never shows another site's tokens: lists hold only the site's own, ids of another site are 404 (check 10)", async () => {
    const a = await ctx.site();
    const b = await ctx.site();
    const tokenOfA = (await a.post('/v1/api-tokens', { name: 'A only', scopes: ['tags.view'] })).body.data;
    expect((await b.get('/v1/api-tokens')).body.data.map((t: any) => t.name)).toEqual(['management token']);
    for (const res of [
      await b.get(`/v1/api-tokens/${tokenOfA.id}`),
      await b.put(`/v1/api-tokens/${tokenOfA.id}`, { name: 'Hijacked' }),
      await b.post(`/v1/api-tokens/${tokenOfA.id}/regenerate`),
      await b.delete(`/v1/api-tokens/${tokenOfA.id}`),
    ]) {
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404, 'NOT_FOUND');
    }
    expect((await storedRow(tokenOfA.id)).name).toBe('A only');
    expect((await storedRow(tokenOfA.id)).revoked_at).toBeNull();
  });
});

describe('PUT /v1/api-tokens/:id', () => {
  it('changes name, description, scopes and expiry; new scopes apply from the next request', async () => {
    const api = await ctx.site();
    const t = (await api.post('/v1/api-tokens', { name: 'Old', scopes: ['tags.view'] })).body.data;
    const its = client(ctx.app, t.token);
    expect((await its.post('/v1/tags', { name: 'Before' })).status).toBe(403);
    const expiresAt = new Date(Date.now() + 3 * DAY_MS).toISOString();
    const res = await api.put(`/v1/api-tokens/${t.id}`, { name: 'New', description: 'now writes', scopes: ['tags.view', 'tags.create'], expiresAt });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'New', description: 'now writes', scopes: ['tags.view', 'tags.create'], expiresAt });
    expect(res.body.data).not.toHaveProperty('token');
    expect((await its.post('/v1/tags', { name: 'After' })).status).toBe(201);
    expect((await api.put(`/v1/api-tokens/${t.id}`, { expiresAt: null })).body.data.expiresAt).toBeNull();
    expect422(await api.put(`/v1/api-tokens/${t.id}`, { expiresAt: '2020-01-01T00:00:00Z' }), 'VALIDATION_FAILED', ['expiresAt']);
  });

  it('refuses to grant scopes the caller does not hold (403 SCOPE_ESCALATION), leaving the token as it was', async () => {
    const api = await ctx.site();
    const weak = await tokenWith(api.siteId, ['api_tokens.update', 'api_tokens.create', 'tags.view', 'tags.create']);
    const t = (await weak.post('/v1/api-tokens', { name: 'Mine', scopes: ['tags.view'] })).body.data;
    const res = await weak.put(`/v1/api-tokens/${t.id}`, { name: 'Renamed', scopes: ['tags.view', 'tags.delete'] });
    expect(res.status).toBe(403);
    expectErrorShape(res.body, 403, 'SCOPE_ESCALATION');
    const stored = await storedRow(t.id);
    expect(stored.name).toBe('Mine');
    expect(JSON.parse(typeof stored.scopes === 'string' ? stored.scopes : JSON.stringify(stored.scopes))).toEqual(['tags.view']);
    expect((await weak.put(`/v1/api-tokens/${t.id}`, { scopes: ['tags.view', 'tags.create'] })).status).toBe(200);
  });
});

describe('a weaker token cannot manage a stronger one (decisions U4, check 4)', () => {
  it('answers 403 TOKEN_NOT_MANAGEABLE to update, regenerate and delete, and the stronger token works on unchanged', async () => {
    const api = await ctx.site();
    const ownerTokenId = (await ctx.app.database.db.selectFrom('api_tokens').select('id').where('site_id', '=', api.siteId).executeTakeFirstOrThrow()).id;
    const weak = await tokenWith(api.siteId, [
      'api_tokens.view',
      'api_tokens.create',
      'api_tokens.update',
      'api_tokens.delete',
      'api_tokens.regenerate',
      'contents.view',
    ]);
    const before = await storedRow(ownerTokenId);
    for (const res of [
      await weak.delete(`/v1/api-tokens/${ownerTokenId}`),
      await weak.post(`/v1/api-tokens/${ownerTokenId}/regenerate`),
      await weak.put(`/v1/api-tokens/${ownerTokenId}`, { name: 'Taken over' }),
    ]) {
      expect(res.status).toBe(403);
      expectErrorShape(res.body, 403, 'TOKEN_NOT_MANAGEABLE');
    }
    expect(await storedRow(ownerTokenId)).toEqual(before);
    expect((await api.get('/v1/site/info')).status).toBe(200);
    // It may manage what it holds, itself included.
    const small = (await weak.post('/v1/api-tokens', { name: 'Small', scopes: ['contents.view'] })).body.data;
    expect((await weak.post(`/v1/api-tokens/${small.id}/regenerate`)).status).toBe(200);
    expect((await weak.delete(`/v1/api-tokens/${small.id}`)).status).toBe(200);
  });
});

describe('POST /v1/api-tokens/:id/regenerate', () => {
  it('gives a new value with the same id, scopes and expiry; the old value answers 401 on the very next request (check 2)', async () => {
    const api = await ctx.site();
    const expiresAt = new Date(Date.now() + 5 * DAY_MS).toISOString();
    const t = (await api.post('/v1/api-tokens', { name: 'Rotating', scopes: ['tags.view'], expiresAt })).body.data;
    const old = client(ctx.app, t.token);
    expect((await old.get('/v1/tags')).status).toBe(200);
    const res = await api.post(`/v1/api-tokens/${t.id}/regenerate`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: t.id, scopes: ['tags.view'], expiresAt, status: 'active' });
    expect(res.body.data.token).not.toBe(t.token);
    expect(res.body.data.token.slice(0, 39)).toBe(t.token.slice(0, 39));
    const gone = await old.get('/v1/tags');
    expect(gone.status).toBe(401);
    expectErrorShape(gone.body, 401, 'UNAUTHORIZED');
    expect((await client(ctx.app, res.body.data.token).get('/v1/tags')).status).toBe(200);
    expect((await storedRow(t.id)).regenerated_at).not.toBeNull();
    // A new expiry may come with it.
    const later = new Date(Date.now() + 9 * DAY_MS).toISOString();
    expect((await api.post(`/v1/api-tokens/${t.id}/regenerate`, { expiresAt: later })).body.data.expiresAt).toBe(later);
  });
});

describe('DELETE /v1/api-tokens/:id', () => {
  it('revokes: 401 TOKEN_REVOKED from the next request, listed as revoked, a second delete or regenerate is 409', async () => {
    const api = await ctx.site();
    const t = (await api.post('/v1/api-tokens', { name: 'Short-lived', scopes: ['tags.view'] })).body.data;
    const its = client(ctx.app, t.token);
    expect((await its.get('/v1/tags')).status).toBe(200);
    const res = await api.delete(`/v1/api-tokens/${t.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'Token revoked.' });
    const after = await its.get('/v1/tags');
    expect(after.status).toBe(401);
    expectErrorShape(after.body, 401, 'TOKEN_REVOKED');
    expect((await api.get(`/v1/api-tokens/${t.id}`)).body.data).toMatchObject({ status: 'revoked', revokedAt: expect.stringMatching(ISO_TIMESTAMP) });
    for (const again of [await api.delete(`/v1/api-tokens/${t.id}`), await api.post(`/v1/api-tokens/${t.id}/regenerate`)]) {
      expect(again.status).toBe(409);
      expectErrorShape(again.body, 409, 'TOKEN_NOT_ACTIVE');
    }
  });
});
