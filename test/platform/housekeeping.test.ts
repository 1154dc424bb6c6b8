import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { ConfigError, loadConfig, type Config } from '../../src/config.js';
import { emitEvent } from '../../src/jobs/outbox.js';
import * as jobsRepo from '../../src/jobs/jobs.repository.js';
import { RETENTION_BATCH, retentionTask } from '../../src/jobs/retention.js';
import { reencryptSecrets } from '../../src/shared/encrypted-columns.js';
import { KEY_FILE, loadSecretBox, SecretBox, parseKey } from '../../src/shared/secrets.js';
import { TEST_SECRET_KEY, type TestApp } from '../helpers/app.js';
import { useTestApp } from '../helpers/suite.js';

/**
 * Housekeeping (issue 16, item 13): the retention of finished work, and webhook secrets
 * encrypted at rest under the server key, with a key rotation.
 */
const ctx = useTestApp();
const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

const servers: http.Server[] = [];
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

/** A receiver answering `status`, recording each request's headers and body. */
async function receiver(status = 200) {
  const requests: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push({ headers: req.headers, body });
      res.statusCode = status;
      res.end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, requests };
}

async function drain(app: TestApp) {
  for (let i = 0; i < 50; i++) if (!(await app.worker.tick())) return;
  throw new Error('the worker never became idle');
}

/** Another process on the same database: its own worker (and retention timers), its own key. */
async function otherProcess(overrides: Partial<Config> = {}): Promise<TestApp> {
  const app = (await createApp({ ...ctx.config, ...overrides }, { database: ctx.app.database, logger: false, migrate: false })) as TestApp;
  await app.ready();
  return app;
}

/** Whether `signature` holds a valid `v1,` signature of the request by `secret` (Standard Webhooks). */
function signedBy(secret: string, req: { headers: http.IncomingHttpHeaders; body: string }): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.${req.body}`).digest('base64');
  return String(req.headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

describe('retention (RETENTION_*_DAYS)', () => {
  it('deletes dispatched outbox events, finished deliveries with their attempts and failed jobs past their days, and nothing else', async () => {
    const api = await ctx.site();
    const db = ctx.app.database.db;
    const ok = await receiver(200);
    const down = await receiver(500);
    const good = (await api.post('/v1/webhooks', { url: ok.url, events: ['content.published'] })).body.data;
    const bad = (await api.post('/v1/webhooks', { url: down.url, events: ['content.published'] })).body.data;
    for (let i = 1; i <= 3; i++) await db.transaction().execute((tx) => emitEvent(tx, api.siteId, 'content.published', { id: i }));
    await drain(ctx.app);
    expect(ok.requests).toHaveLength(3);
    const delivered = (await api.get(`/v1/webhooks/${good.id}/deliveries`)).body.data;
    const pending = (await api.get(`/v1/webhooks/${bad.id}/deliveries`)).body.data;
    expect(delivered.map((d: any) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(pending.every((d: any) => d.status === 'pending')).toBe(true);

    const events = await db.selectFrom('outbox_events').select(['id']).where('site_id', '=', api.siteId).orderBy('id').execute();
    // Two events dispatched long ago, one yesterday; two deliveries finished long ago, and every
    // pending one last touched long ago (still retrying: never deleted).
    await db
      .updateTable('outbox_events')
      .set({ dispatched_at: daysAgo(8) })
      .where('id', 'in', [events[0]!.id, events[1]!.id])
      .execute();
    await db
      .updateTable('outbox_events')
      .set({ dispatched_at: daysAgo(1) })
      .where('id', '=', events[2]!.id)
      .execute();
    await db
      .updateTable('webhook_deliveries')
      .set({ updated_at: daysAgo(31) })
      .where('id', 'in', [delivered[1].id, delivered[2].id])
      .execute();
    await db
      .updateTable('webhook_deliveries')
      .set({ updated_at: daysAgo(90) })
      .where('webhook_id', '=', bad.id)
      .execute();
    const job = (key: string, failedAt: string | null) =>
      jobsRepo
        .upsertJob(db, { siteId: api.siteId, type: 'test.noop', key, payload: '{}', runAt: daysAgo(-1), at: daysAgo(60) })
        .then(() => db.updateTable('jobs').set({ failed_at: failedAt }).where('site_id', '=', api.siteId).where('key', '=', key).execute());
    await job('failed-long-ago', daysAgo(31));
    await job('failed-yesterday', daysAgo(1));
    await job('pending', null);
    const attemptsBefore = await db.selectFrom('webhook_attempts').select('delivery_id').where('site_id', '=', api.siteId).execute();
    expect(attemptsBefore.filter((a) => a.delivery_id === delivered[2].id)).toHaveLength(1);

    // A process that starts now runs each retention task at its first tick.
    const other = await otherProcess();
    try {
      await other.worker.tick();
    } finally {
      await other.close();
    }

    const left = await db.selectFrom('outbox_events').select('id').where('site_id', '=', api.siteId).orderBy('id').execute();
    expect(left.map((e) => e.id)).toEqual([events[2]!.id]);
    const kept = (await api.get(`/v1/webhooks/${good.id}/deliveries`)).body.data;
    expect(kept.map((d: any) => d.id)).toEqual([delivered[0].id]);
    expect((await api.get(`/v1/webhooks/${good.id}/deliveries/${delivered[2].id}`)).status).toBe(404);
    expect((await api.get(`/v1/webhooks/${bad.id}/deliveries`)).body.data).toHaveLength(pending.length);
    const attemptsAfter = await db.selectFrom('webhook_attempts').select('delivery_id').where('site_id', '=', api.siteId).execute();
    expect(attemptsAfter.some((a) => a.delivery_id === delivered[1].id || a.delivery_id === delivered[2].id)).toBe(false);
    expect(attemptsAfter.some((a) => a.delivery_id === delivered[0].id)).toBe(true);
    const jobs = await db.selectFrom('jobs').select('key').where('site_id', '=', api.siteId).orderBy('key').execute();
    expect(jobs.map((j) => j.key)).toEqual(['failed-yesterday', 'pending']);
  });

  it('deletes a backlog in batches, one per tick, and keeps everything when its days are 0', async () => {
    const api = await ctx.site();
    const db = ctx.app.database.db;
    const rows = Array.from({ length: RETENTION_BATCH * 2 + 500 }, (_, i) => ({
      site_id: api.siteId,
      type: 'content.published',
      payload: `{"n":${i}}`,
      created_at: daysAgo(20),
      dispatched_at: daysAgo(20),
    }));
    for (let i = 0; i < rows.length; i += 500)
      await db
        .insertInto('outbox_events')
        .values(rows.slice(i, i + 500))
        .execute();
    const count = async () =>
      Number(
        (
          await db
            .selectFrom('outbox_events')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('site_id', '=', api.siteId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const taskCtx = { db, log: ctx.app.log };

    await retentionTask(0, jobsRepo.deleteDispatchedEvents)(taskCtx);
    expect(await count()).toBe(rows.length);

    const task = retentionTask(7, jobsRepo.deleteDispatchedEvents);
    await task(taskCtx);
    expect(await count()).toBe(RETENTION_BATCH + 500);
    await task(taskCtx);
    expect(await count()).toBe(500);
    await task(taskCtx);
    expect(await count()).toBe(0);
  });
});

describe('webhook secrets at rest (CAIRN_SECRET_KEY)', () => {
  it('stores the signing secret encrypted, and signs with it in clear', async () => {
    const api = await ctx.site();
    const rec = await receiver();
    const hook = (await api.post('/v1/webhooks', { url: rec.url, events: ['content.published'] })).body.data;
    const row = await ctx.app.database.db.selectFrom('webhooks').select(['secret']).where('id', '=', hook.id).executeTakeFirstOrThrow();
    expect(row.secret).toMatch(/^enc:v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    expect(row.secret).not.toContain(hook.secret.slice(6, 20));
    // Rotation through the API: the new secret is stored encrypted too, and both sign for a day.
    const rotated = (await api.post(`/v1/webhooks/${hook.id}/rotate-secret`)).body.data;
    const after = await ctx.app.database.db.selectFrom('webhooks').select(['secret', 'previous_secret']).where('id', '=', hook.id).executeTakeFirstOrThrow();
    expect(after.secret).toMatch(/^enc:v1:/);
    expect(after.previous_secret).toBe(row.secret);
    await ctx.app.database.db.transaction().execute((tx) => emitEvent(tx, api.siteId, 'content.published', { id: 1 }));
    await drain(ctx.app);
    expect(rec.requests).toHaveLength(1);
    expect(signedBy(rotated.secret, rec.requests[0]!)).toBe(true);
    expect(signedBy(hook.secret, rec.requests[0]!)).toBe(true);
  });

  it('rotates the server key: old values open with CAIRN_SECRET_KEY_PREVIOUS until re-encrypted, a process without the key sends nothing unsigned', async () => {
    const api = await ctx.site();
    const db = ctx.app.database.db;
    const rec = await receiver();
    const hook = (await api.post('/v1/webhooks', { url: rec.url, events: ['content.published'] })).body.data;
    // A webhook written before encryption existed: its secret in clear, still read as is.
    const legacy = (await api.post('/v1/webhooks', { url: `${rec.url}?legacy`, events: ['content.published'] })).body.data;
    const legacySecret = `whsec_${randomBytes(32).toString('base64')}`;
    await db.updateTable('webhooks').set({ secret: legacySecret }).where('id', '=', legacy.id).execute();

    const newKey = randomBytes(32).toString('base64');
    // Only the new key: the stored secrets cannot be opened, so the attempt fails and says why.
    const lost = await otherProcess({ secrets: { key: newKey, previous: [] } });
    try {
      await db.transaction().execute((tx) => emitEvent(tx, api.siteId, 'content.published', { id: 1 }));
      await lost.worker.tick();
      await lost.worker.tick();
    } finally {
      await lost.close();
    }
    const sentFor = (id: number) => rec.requests.filter((r) => String(r.headers['webhook-id']).endsWith(`_${id}`));
    expect(sentFor(hook.id)).toHaveLength(0);
    expect(sentFor(legacy.id)).toHaveLength(1);
    expect(signedBy(legacySecret, sentFor(legacy.id)[0]!)).toBe(true);
    const failed = (await api.get(`/v1/webhooks/${hook.id}/deliveries`)).body.data[0];
    expect(failed.status).toBe('pending');
    expect(failed.lastError).toMatch(/key [0-9a-f]{8}.*CAIRN_SECRET_KEY/);
    expect(failed.attempts[0].error).toMatch(/key [0-9a-f]{8}.*CAIRN_SECRET_KEY/);

    // The documented rotation: the new key, the old one as previous, then `cairn secrets rotate`.
    const box = new SecretBox(parseKey(newKey, 'new'), [parseKey(TEST_SECRET_KEY, 'old')]);
    expect(await reencryptSecrets(db, box)).toMatchObject({ rotated: expect.any(Number) });
    const stored = await db.selectFrom('webhooks').select(['id', 'secret']).where('site_id', '=', api.siteId).execute();
    for (const s of stored) expect(s.secret.startsWith(`enc:v1:${box.keyId}:`)).toBe(true);
    expect(box.decrypt(stored.find((s) => s.id === legacy.id)!.secret)).toBe(legacySecret);
    expect(box.decrypt(stored.find((s) => s.id === hook.id)!.secret)).toBe(hook.secret);
    expect((await reencryptSecrets(db, box)).rotated).toBe(0);

    // A process with only the new key now signs every webhook with its own secret.
    rec.requests.length = 0;
    const renewed = await otherProcess({ secrets: { key: newKey, previous: [] } });
    try {
      await db
        .updateTable('webhook_deliveries')
        .set({ next_attempt_at: daysAgo(0) })
        .where('site_id', '=', api.siteId)
        .where('status', '=', 'pending')
        .execute();
      await db.transaction().execute((tx) => emitEvent(tx, api.siteId, 'content.published', { id: 2 }));
      for (let i = 0; i < 5; i++) await renewed.worker.tick();
    } finally {
      await renewed.close();
    }
    const forHook = sentFor(hook.id);
    const forLegacy = sentFor(legacy.id);
    // The hook: its retried first delivery and the second; the legacy webhook: the second.
    expect(forHook).toHaveLength(2);
    expect(forLegacy).toHaveLength(1);
    expect(forHook.every((r) => signedBy(hook.secret, r))).toBe(true);
    expect(forLegacy.every((r) => signedBy(legacySecret, r))).toBe(true);
  });

  it('refuses a malformed key at start-up, and without one keeps its key in the data directory', () => {
    expect(() => loadConfig({ CAIRN_SECRET_KEY: 'too-short' })).toThrow(ConfigError);
    expect(() => loadConfig({ CAIRN_SECRET_KEY: 'a'.repeat(64), CAIRN_SECRET_KEY_PREVIOUS: `${'b'.repeat(64)},nope` })).toThrow(/PREVIOUS \(key 2\)/);
    expect(loadConfig({ CAIRN_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') }).secrets.key).toBeTruthy();

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-key-'));
    try {
      const first = loadSecretBox({ key: null, previous: [] }, path.join(dir, 'data'));
      expect(first.source).toBe('file');
      const file = path.join(dir, 'data', KEY_FILE);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const again = loadSecretBox({ key: null, previous: [] }, path.join(dir, 'data'));
      expect(again.box.keyId).toBe(first.box.keyId);
      expect(again.box.decrypt(first.box.encrypt('whsec_x'))).toBe('whsec_x');
      // A value cannot be forged or moved: any change to the ciphertext fails its tag.
      const sealed = first.box.encrypt('whsec_y');
      // The second-to-last character carries six bits of the tag (the last may carry padding bits only).
      const tampered = `${sealed.slice(0, -2)}${sealed.at(-2) === 'A' ? 'B' : 'A'}${sealed.slice(-1)}`;
      expect(() => first.box.decrypt(tampered)).toThrow();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
