import { describe, expect, it } from 'vitest';
import { createTokenFor } from '../helpers/app.js';
import { client, expectErrorShape } from '../helpers/http.js';
import { useTestApp } from '../helpers/suite.js';

/**
 * Issue 36 item 13, decisions HR4: `Idempotency-Key` on every create. The same key and body
 * within 24 hours answer the stored answer without doing the work again; the same key with
 * another body is a 422; keys are per token and site; the answer is stored in the write's own
 * transaction. The kill -9 between commit and answer is in test/faults/idempotency-kill.test.ts.
 */
const ctx = useTestApp();

const keyed = (key: string) => ({ 'idempotency-key': key });

async function count(table: 'contents' | 'tags' | 'idempotency_keys', siteId: string) {
  const row = await ctx.app.database.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('Idempotency-Key on creates (decisions HR4)', () => {
  it('answers a retry with the same key and body with the first answer, without a second write', async () => {
    const api = await ctx.site();
    const first = await api.post('/v1/contents', { type: 'post', title: 'Once' }, keyed('k-1'));
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await api.post('/v1/contents', { type: 'post', title: 'Once' }, keyed('k-1'));
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(await count('contents', api.siteId)).toBe(1);
    // Without a key every create is a new one.
    expect((await api.post('/v1/contents', { type: 'post', title: 'Once' })).body.data.slug).toBe('once-2');
    expect(await count('contents', api.siteId)).toBe(2);
  });

  it('refuses the same key with another body or path with 422 IDEMPOTENCY_KEY_REUSED, changing nothing', async () => {
    const api = await ctx.site();
    expect((await api.post('/v1/tags', { name: 'First' }, keyed('k-2'))).status).toBe(201);
    for (const [url, body] of [
      ['/v1/tags', { name: 'Second' }],
      ['/v1/categories', { name: 'First' }],
    ] as const) {
      const res = await api.post(url, body, keyed('k-2'));
      expect(res.status, url).toBe(422);
      expectErrorShape(res.body, 422, 'IDEMPOTENCY_KEY_REUSED');
      expect(res.body.errors).toHaveProperty(['Idempotency-Key']);
    }
    expect(await count('tags', api.siteId)).toBe(1);
    const bad = await api.post('/v1/tags', { name: 'Third' }, keyed('x'.repeat(256)));
    expect(bad.status).toBe(422);
    expectErrorShape(bad.body, 422, 'VALIDATION_FAILED');
    expect(await count('tags', api.siteId)).toBe(1);
  });

  it('keeps keys per token and site, and keeps no failed answer', async () => {
    const api = await ctx.site();
    const other = client(ctx.app, (await createTokenFor(ctx.app, api.siteId)).token);
    const elsewhere = await ctx.site();
    const a = await api.post('/v1/tags', { name: 'Shared key' }, keyed('k-3'));
    const b = await other.post('/v1/tags', { name: 'Shared key 2' }, keyed('k-3'));
    const c = await elsewhere.post('/v1/tags', { name: 'Shared key' }, keyed('k-3'));
    expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
    expect(new Set([a.body.data.id, b.body.data.id]).size).toBe(2);
    expect(await count('tags', api.siteId)).toBe(2);
    // A 422 is not stored: the key answers the corrected request.
    const failed = await api.post('/v1/tags', { name: '' }, keyed('k-4'));
    expect(failed.status).toBe(422);
    expect((await api.post('/v1/tags', { name: 'Fixed' }, keyed('k-4'))).status).toBe(201);
    expect(await count('idempotency_keys', api.siteId)).toBe(3);
  });

  it('a failed create leaves nothing of its write, and a later step failing rolls back the whole request', async () => {
    const api = await ctx.site();
    const res = await api.post('/v1/contents', { type: 'post', title: 'Bad refs', tagIds: [999_999] }, keyed('k-5'));
    expect(res.status).toBe(422);
    expect(await count('contents', api.siteId)).toBe(0);
    expect(await count('idempotency_keys', api.siteId)).toBe(0);
  });

  it('parallel requests with one key make one record and all answer it', async () => {
    const api = await ctx.site();
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.post('/v1/contents', { type: 'post', title: 'Racing' }, keyed('k-6'))));
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(new Set(answers.map((r) => r.body.data.id)).size).toBe(1);
    expect(await count('contents', api.siteId)).toBe(1);
  });

  it('forgets a key after 24 hours, and the sweep deletes it', async () => {
    const api = await ctx.site();
    const first = await api.post('/v1/tags', { name: 'Old' }, keyed('k-7'));
    const dayAgo = new Date(Date.now() - 24 * 3_600_000 - 60_000).toISOString();
    await ctx.app.database.db.updateTable('idempotency_keys').set({ created_at: dayAgo }).where('site_id', '=', api.siteId).execute();
    const later = await api.post('/v1/tags', { name: 'Old 2' }, keyed('k-7'));
    expect(later.status).toBe(201);
    expect(later.body.data.id).not.toBe(first.body.data.id);
    await ctx.app.database.db.updateTable('idempotency_keys').set({ created_at: dayAgo }).where('site_id', '=', api.siteId).execute();
    expect(await count('idempotency_keys', api.siteId)).toBe(1);
    await ctx.app.worker.tick();
    expect(await count('idempotency_keys', api.siteId)).toBe(0);
  });

  it('documents the header once, as a reusable parameter every create references', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    const ref = { $ref: '#/components/parameters/IdempotencyKey' };
    expect(doc.paths['/v1/contents'].post.parameters).toContainEqual(ref);
    expect(doc.paths['/v1/tags'].post.parameters).toContainEqual(ref);
    expect(doc.paths['/v1/contents'].get.parameters ?? []).not.toContainEqual(ref);
    // A POST that does not create (an action answering 200) takes no key.
    expect(doc.paths['/v1/contents/{id}/publish'].post.parameters ?? []).not.toContainEqual(ref);
  });
});
