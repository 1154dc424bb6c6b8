import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken, TEST_DIALECT, type TestApp, type TestContext } from '../../../test/helpers/app.js';
import { client, expectErrorShape, type Client } from '../../../test/helpers/http.js';
import { EVENT_TYPES, emitEvent, type EventType } from '../../jobs/outbox.js';
import { describedEvents, MODULES } from '../index.js';
import type { AppModule } from '../types.js';
import {
  deliverDue,
  deliverySettings,
  dispatchOutbox,
  MAX_ATTEMPTS,
  RESPONSE_EXCERPT_LIMIT,
  RETRY_AFTER_CAP_MS,
  retryDelay,
  RETRY_SCHEDULE_MS,
} from './webhooks.delivery.js';
import * as repo from './webhooks.repository.js';
import { loadSecretBox } from '../../shared/secrets.js';
import { useTestApp } from '../../../test/helpers/suite.js';

// ------------------------------------------------------------------------------------------------
// A local receiver that records every request and answers as told
// ------------------------------------------------------------------------------------------------

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Handler = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void;
interface Receiver {
  url: string;
  origin: string;
  requests: Received[];
  close(): Promise<void>;
}

const receivers: Receiver[] = [];
async function receiver(handler: Handler = (_req, res) => res.end('ok')): Promise<Receiver> {
  const requests: Received[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      handler(req, res, requests.length);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rec: Receiver = {
    url: `${origin}/hook`,
    origin,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
  receivers.push(rec);
  return rec;
}
/** Answers with these statuses in turn (the last one repeats). */
const statuses =
  (...codes: number[]): Handler =>
  (_req, res, n) => {
    res.statusCode = codes[Math.min(n, codes.length) - 1]!;
    res.end(`answer ${n}`);
  };

// ------------------------------------------------------------------------------------------------
// The app, sites, and driving the worker
// ------------------------------------------------------------------------------------------------

const TIMEOUT_MS = 1000;
const MAX_FAILURES = 3;
const ctx = useTestApp({ webhooks: { timeoutMs: TIMEOUT_MS, maxFailures: MAX_FAILURES } });
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

interface Site {
  api: Client;
  siteId: string;
}
async function site(app: TestApp = ctx.app): Promise<Site> {
  const s = await createSiteWithToken(app);
  return { api: client(app, s.token), siteId: s.siteId };
}

async function hook(api: Client, url: string, events: string[] = ['content.published'], extra: Record<string, unknown> = {}) {
  const res = await api.post('/v1/webhooks', { url, events, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: number; secret: string; isActive: boolean };
}

async function emit(siteId: string, type: EventType, data: Record<string, unknown>, app: TestApp = ctx.app) {
  await app.database.db.transaction().execute((tx) => emitEvent(tx, siteId, type, data));
}

/** Ticks the worker until it reports no more work. */
async function drain(app: TestApp = ctx.app) {
  for (let i = 0; i < 100; i++) if (!(await app.worker.tick())) return;
  throw new Error('the worker never became idle');
}

/** Moves the site's pending deliveries' next attempt into the past (instead of waiting out the backoff). */
async function makeDue(siteId: string, app: TestApp = ctx.app) {
  await app.database.db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: new Date(Date.now() - 1000).toISOString() })
    .where('site_id', '=', siteId)
    .where('status', '=', 'pending')
    .execute();
}

async function deliveries(api: Client, webhookId: number, query = '') {
  const res = await api.get(`/v1/webhooks/${webhookId}/deliveries?limit=100&sortBy=created_at&sortOrder=asc${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as any[];
}

/** Standard Webhooks verification, written from the specification, independent of the code under test. */
function verifies(secret: string, req: Received): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.${req.body}`).digest('base64');
  return String(req.headers['webhook-signature'])
    .split(' ')
    .some((s) => s === `v1,${expected}`);
}

const content = (id: number, status = 'published') => ({
  id,
  title: `Post ${id}`,
  slug: `post-${id}`,
  locale: 'en',
  status,
  publishedAt: '2026-11-22T10:00:00.000Z',
});

// ------------------------------------------------------------------------------------------------
// Management
// ------------------------------------------------------------------------------------------------

describe('webhook management', () => {
  it('creates a webhook (201) and shows its whsec_ secret only then', async () => {
    const { api } = await site();
    const res = await api.post('/v1/webhooks', {
      url: 'https://example.com/hooks/cairn',
      events: ['content.published', 'content.archived'],
      description: 'Rebuild',
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(Number),
      url: 'https://example.com/hooks/cairn',
      description: 'Rebuild',
      events: ['content.published', 'content.archived'],
      isActive: true,
      consecutiveFailures: 0,
      disabledReason: null,
      disabledAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(res.body.data.secret.slice(6), 'base64')).toHaveLength(32);
    const got = await api.get(`/v1/webhooks/${res.body.data.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).not.toHaveProperty('secret');
    expect(got.text).not.toContain(res.body.data.secret.slice(6));
    const list = await api.get('/v1/webhooks');
    expect(list.body.meta).toEqual({ total: 1, perPage: 15, currentPage: 1, lastPage: 1 });
    expect(list.body.data[0]).not.toHaveProperty('secret');
  });

  it('validates url, events, description and isActive with 422 naming the field', async () => {
    const { api } = await site();
    for (const [body, field] of [
      [{ events: ['content.published'] }, 'url'],
      [{ url: 'ftp://example.com/x', events: ['content.published'] }, 'url'],
      [{ url: 'not a url', events: ['content.published'] }, 'url'],
      [{ url: `https://example.com/${'x'.repeat(2030)}`, events: ['content.published'] }, 'url'],
      [{ url: 'https://example.com' }, 'events'],
      [{ url: 'https://example.com', events: [] }, 'events'],
      [{ url: 'https://example.com', events: ['content.deleted'] }, 'events[0]'],
      [{ url: 'https://example.com', events: ['content.published', 'content.published'] }, 'events'],
      [{ url: 'https://example.com', events: ['content.published'], description: 'd'.repeat(501) }, 'description'],
      [{ url: 'https://example.com', events: ['content.published'], isActive: 'yes' }, 'isActive'],
    ] as const) {
      const res = await api.post('/v1/webhooks', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expectErrorShape(res.body, 422);
      expect(Object.keys(res.body.errors), JSON.stringify(body).slice(0, 80)).toContain(field);
    }
    const scheme = await api.post('/v1/webhooks', { url: 'ftp://example.com/x', events: ['content.published'] });
    expectErrorShape(scheme.body, 422, 'WEBHOOK_URL_INVALID');
    expect((await api.get('/v1/webhooks')).body.meta.total).toBe(0);
  });

  it('stores ["*"] alone when * is given, and lists, filters, updates (partially) and deletes', async () => {
    const { api } = await site();
    const all = await hook(api, 'https://example.com/a', ['content.archived', '*']);
    expect((await api.get(`/v1/webhooks/${all.id}`)).body.data.events).toEqual(['*']);
    const off = await hook(api, 'https://example.com/b', ['content.archived'], { isActive: false, description: 'Off' });
    expect(off.isActive).toBe(false);
    expect((await api.get('/v1/webhooks?isActive=false')).body.data.map((w: any) => w.id)).toEqual([off.id]);
    expect((await api.get('/v1/webhooks?search=OFF')).body.data.map((w: any) => w.id)).toEqual([off.id]);
    expect((await api.get('/v1/webhooks?sortBy=url&sortOrder=asc')).body.data.map((w: any) => w.id)).toEqual([all.id, off.id]);
    expect((await api.get('/v1/webhooks?sortBy=secret')).status).toBe(422);

    const upd = await api.put(`/v1/webhooks/${off.id}`, { description: null, events: ['content.published'] });
    expect(upd.status).toBe(200);
    expect(upd.body.data).toMatchObject({ url: 'https://example.com/b', description: null, events: ['content.published'], isActive: false });
    expect((await api.put(`/v1/webhooks/${off.id}`, {})).status).toBe(422);
    expectErrorShape((await api.put(`/v1/webhooks/${off.id}`, { url: 'gopher://x' })).body, 422, 'WEBHOOK_URL_INVALID');

    const del = await api.delete(`/v1/webhooks/${off.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: 'Webhook deleted.' });
    expect((await api.get(`/v1/webhooks/${off.id}`)).status).toBe(404);
    expect((await api.delete(`/v1/webhooks/${off.id}`)).status).toBe(404);
  });

  it("answers 404 for another site's webhook and never lists it", async () => {
    const a = await site();
    const b = await site();
    const w = await hook(b.api, 'https://example.com/b');
    for (const res of [
      await a.api.get(`/v1/webhooks/${w.id}`),
      await a.api.put(`/v1/webhooks/${w.id}`, { description: 'x' }),
      await a.api.post(`/v1/webhooks/${w.id}/rotate-secret`),
      await a.api.post(`/v1/webhooks/${w.id}/test`),
      await a.api.get(`/v1/webhooks/${w.id}/deliveries`),
      await a.api.delete(`/v1/webhooks/${w.id}`),
    ]) {
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 404);
    }
    expect((await a.api.get('/v1/webhooks')).body.data).toEqual([]);
  });

  it('publishes the event catalog with a data schema per event', async () => {
    const { api } = await site();
    const res = await api.get('/v1/webhooks/events');
    expect(res.status).toBe(200);
    const all = [
      'content.published',
      'content.archived',
      'site_block.published',
      'site_block.unpublished',
      'form.submitted',
      'media.uploaded',
      'media.replaced',
      'media.deleted',
      'site.imported',
    ];
    expect(res.body.data.map((e: any) => e.type)).toEqual(all);
    for (const e of res.body.data.slice(0, 2)) {
      expect(e.description).toEqual(expect.any(String));
      expect(Object.keys(e.dataSchema.properties)).toEqual(['id', 'title', 'slug', 'locale', 'status', 'publishedAt', 'url']);
      expect(e.dataSchema.required).toEqual(['id', 'title', 'slug', 'locale', 'status', 'publishedAt']);
      expect(e.example).toMatchObject({ type: e.type, timestamp: expect.any(String), data: { id: 42 } });
    }
    for (const e of res.body.data.slice(2, 4)) {
      expect(Object.keys(e.dataSchema.properties)).toEqual(['id', 'name', 'slug', 'type', 'path', 'locale', 'status', 'publishedAt']);
      expect(e.example).toMatchObject({ type: e.type, data: { id: 7, slug: 'header' } });
    }
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/v1/webhooks/events'].get['x-scope']).toBe('webhooks.view');
    expect(doc.paths['/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver'].post['x-scope']).toBe('webhooks.update');
    expect(doc.paths['/v1/webhooks/{id}/test'].post['x-scope']).toBe('webhooks.test');
    // The OpenAPI 3.1 `webhooks` object describing what Cairn POSTs, at the document's top level.
    const described = doc.webhooks as Record<string, any>;
    expect(Object.keys(described)).toEqual(all);
    const schema = described['content.published'].post.requestBody.content['application/json'].schema;
    expect(schema.properties.type.const).toBe('content.published');
    expect(Object.keys(schema.properties.data.properties)).toEqual(['id', 'title', 'slug', 'locale', 'status', 'publishedAt', 'url']);
    expect(described['content.published'].post.parameters.map((p: any) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
  });
});

// ------------------------------------------------------------------------------------------------
// Delivery
// ------------------------------------------------------------------------------------------------

describe('delivery from the outbox', () => {
  it('POSTs one signed Standard Webhooks request per event and subscribed webhook, and logs it', async () => {
    const rec = await receiver();
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    await emit(siteId, 'content.published', content(7));
    const before = Math.floor(Date.now() / 1000);
    await drain();
    expect(rec.requests).toHaveLength(1);
    const req = rec.requests[0]!;
    const event = await ctx.app.database.db.selectFrom('outbox_events').selectAll().where('site_id', '=', siteId).executeTakeFirstOrThrow();
    expect(event.dispatched_at).not.toBeNull();
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hook');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('Cairn-Webhooks/1');
    expect(req.headers['webhook-id']).toBe(`msg_${event.id}_${w.id}`);
    expect(Number(req.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before - 1);
    expect(Number(req.headers['webhook-timestamp'])).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifies(w.secret, req)).toBe(true);
    expect(verifies(w.secret, { ...req, body: req.body.replace('Post 7', 'Post 8') })).toBe(false);
    expect(JSON.parse(req.body)).toEqual({ type: 'content.published', timestamp: event.created_at, data: content(7) });

    const [d] = await deliveries(api, w.id);
    expect(d).toMatchObject({
      webhookId: w.id,
      eventId: Number(event.id),
      messageId: `msg_${event.id}_${w.id}`,
      eventType: 'content.published',
      status: 'succeeded',
      attemptCount: 1,
      nextAttemptAt: null,
      lastStatusCode: 200,
      lastError: null,
      payload: JSON.parse(req.body),
    });
    expect(d.attempts).toEqual([
      { id: expect.any(Number), attemptedAt: expect.any(String), statusCode: 200, durationMs: expect.any(Number), error: null, responseBodyExcerpt: 'ok' },
    ]);
    await drain();
    expect(rec.requests).toHaveLength(1);
  });

  it("sends only subscribed types, only to active webhooks of the event's site; * gets everything", async () => {
    const published = await receiver();
    const everything = await receiver();
    const inactive = await receiver();
    const otherSite = await receiver();
    const { api, siteId } = await site();
    await hook(api, published.url, ['content.published']);
    await hook(api, everything.url, ['*']);
    await hook(api, inactive.url, ['*'], { isActive: false });
    await hook((await site()).api, otherSite.url, ['*']);
    await emit(siteId, 'content.published', content(1));
    await emit(siteId, 'content.archived', content(1, 'archived'));
    await drain();
    expect(published.requests.map((r) => JSON.parse(r.body).type)).toEqual(['content.published']);
    expect(everything.requests.map((r) => JSON.parse(r.body).type)).toEqual(['content.published', 'content.archived']);
    expect(inactive.requests).toEqual([]);
    expect(otherSite.requests).toEqual([]);
  });

  it('delivers events committed with emitEvent, never those rolled back', async () => {
    const rec = await receiver();
    const { api, siteId } = await site();
    await hook(api, rec.url, ['*']);
    const db = ctx.app.database.db;
    await expect(
      db.transaction().execute(async (tx) => {
        await emitEvent(tx, siteId, 'content.published', content(1));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await db.transaction().execute(async (tx) => {
      await emitEvent(tx, siteId, 'content.published', content(2));
      await emitEvent(tx, siteId, 'content.archived', content(3, 'archived'));
    });
    await drain();
    expect(rec.requests.map((r) => JSON.parse(r.body).data.id)).toEqual([2, 3]);
  });

  it("delivers a webhook's events in order", async () => {
    const rec = await receiver();
    const { api, siteId } = await site();
    await hook(api, rec.url);
    for (let i = 1; i <= 12; i++) await emit(siteId, 'content.published', content(i));
    await drain();
    expect(rec.requests.map((r) => JSON.parse(r.body).data.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it('retries a failing receiver: fail, fail, succeed is three attempts with one webhook-id, all in the log', async () => {
    const rec = await receiver(statuses(500, 503, 204));
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    await emit(siteId, 'content.published', content(1));
    await drain();
    let [d] = await deliveries(api, w.id);
    expect(d).toMatchObject({ status: 'pending', attemptCount: 1, lastStatusCode: 500, lastError: 'HTTP 500' });
    // The first retry waits about 5 s (±20%): nothing is due yet.
    const wait = Date.parse(d.nextAttemptAt) - Date.parse(d.attempts[0].attemptedAt);
    expect(wait).toBeGreaterThanOrEqual(4000);
    expect(wait).toBeLessThanOrEqual(6000 + d.attempts[0].durationMs + 50);
    await drain();
    expect(rec.requests).toHaveLength(1);

    await makeDue(siteId);
    await drain();
    [d] = await deliveries(api, w.id);
    expect(d).toMatchObject({ status: 'pending', attemptCount: 2, lastStatusCode: 503 });
    const second = Date.parse(d.nextAttemptAt) - Date.parse(d.attempts[1].attemptedAt);
    expect(second).toBeGreaterThanOrEqual(240_000);
    expect(second).toBeLessThanOrEqual(360_000 + 1000);

    await makeDue(siteId);
    await drain();
    [d] = await deliveries(api, w.id);
    expect(d).toMatchObject({ status: 'succeeded', attemptCount: 3, lastStatusCode: 204, lastError: null, nextAttemptAt: null });
    expect(d.attempts.map((a: any) => [a.statusCode, a.error, a.responseBodyExcerpt])).toEqual([
      [500, 'HTTP 500', 'answer 1'],
      [503, 'HTTP 503', 'answer 2'],
      [204, null, null],
    ]);
    expect(rec.requests).toHaveLength(3);
    expect(new Set(rec.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(rec.requests.map((r) => r.body)).size).toBe(1);
    for (const r of rec.requests) expect(verifies(w.secret, r)).toBe(true);
    expect((await api.get(`/v1/webhooks/${w.id}`)).body.data.consecutiveFailures).toBe(0);
  });

  it('spreads retries over about a day with ±20% jitter, then fails the delivery', () => {
    const total = RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(20 * 3_600_000);
    expect(total).toBeLessThan(30 * 3_600_000);
    for (let i = 1; i < RETRY_SCHEDULE_MS.length; i++) expect(RETRY_SCHEDULE_MS[i]!).toBeGreaterThanOrEqual(RETRY_SCHEDULE_MS[i - 1]!);
    expect(retryDelay(1, null, () => 0)).toBe(4000);
    expect(retryDelay(1, null, () => 1)).toBe(6000);
    expect(retryDelay(1, 3000, () => 0.5)).toBe(5000);
    expect(retryDelay(1, 60_000, () => 0.5)).toBe(60_000);
    expect(retryDelay(2, 10 * 86_400_000, () => 0.5)).toBe(RETRY_AFTER_CAP_MS);
  });

  it('honours a Retry-After (seconds or HTTP date) that asks for longer than the backoff', async () => {
    const retryAfter = ['120', new Date(Date.now() + 600_000).toUTCString(), '1'];
    const rec = await receiver((_req, res, n) => {
      res.writeHead(n === 1 ? 429 : 503, { 'retry-after': retryAfter[n - 1]! });
      res.end();
    });
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    await emit(siteId, 'content.published', content(1));
    await drain();
    let [d] = await deliveries(api, w.id);
    const gap = (i: number) => Date.parse(d.nextAttemptAt) - Date.parse(d.attempts[i].attemptedAt);
    expect(d.lastStatusCode).toBe(429);
    expect(gap(0)).toBeGreaterThanOrEqual(120_000);
    expect(gap(0)).toBeLessThan(122_000);
    await makeDue(siteId);
    await drain();
    [d] = await deliveries(api, w.id);
    expect(gap(1)).toBeGreaterThan(590_000);
    expect(gap(1)).toBeLessThan(602_000);
    await makeDue(siteId);
    await drain();
    [d] = await deliveries(api, w.id);
    // Retry-After: 1 asks for less than the 30-minute step: the schedule wins.
    expect(gap(2)).toBeGreaterThanOrEqual(0.8 * 1_800_000);
  });

  it('disables the webhook when the receiver answers 410, and an update re-enables it', async () => {
    const rec = await receiver(statuses(410, 200));
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    await emit(siteId, 'content.published', content(1));
    await drain();
    const got = (await api.get(`/v1/webhooks/${w.id}`)).body.data;
    expect(got).toMatchObject({ isActive: false, disabledReason: expect.stringContaining('410'), disabledAt: expect.any(String) });
    const [d] = await deliveries(api, w.id);
    expect(d).toMatchObject({ status: 'failed', attemptCount: 1, lastStatusCode: 410, nextAttemptAt: null });
    // While disabled: no delivery for new events.
    await emit(siteId, 'content.published', content(2));
    await drain();
    expect(rec.requests).toHaveLength(1);
    expect(await deliveries(api, w.id)).toHaveLength(1);

    const on = await api.put(`/v1/webhooks/${w.id}`, { isActive: true });
    expect(on.body.data).toMatchObject({ isActive: true, disabledReason: null, disabledAt: null, consecutiveFailures: 0 });
    await emit(siteId, 'content.published', content(3));
    await drain();
    expect(rec.requests.map((r) => JSON.parse(r.body).data.id)).toEqual([1, 3]);
  });

  it(`disables a webhook after ${MAX_FAILURES} deliveries in a row fail for good; a success resets the count; an update re-enables`, async () => {
    let failing = true;
    const rec = await receiver((_req, res) => {
      res.statusCode = failing ? 500 : 200;
      res.end();
    });
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    const exhaust = async () => {
      for (let i = 0; i < MAX_ATTEMPTS + 1; i++) {
        await makeDue(siteId);
        await drain();
      }
    };
    // One delivery that fails MAX_ATTEMPTS times, then a success: the count goes to 1 and back to 0.
    await emit(siteId, 'content.published', content(1));
    await exhaust();
    let [d] = await deliveries(api, w.id);
    expect(d).toMatchObject({ status: 'failed', attemptCount: MAX_ATTEMPTS, nextAttemptAt: null });
    expect((await api.get(`/v1/webhooks/${w.id}`)).body.data).toMatchObject({ isActive: true, consecutiveFailures: 1 });
    failing = false;
    await emit(siteId, 'content.published', content(2));
    await drain();
    expect((await api.get(`/v1/webhooks/${w.id}`)).body.data.consecutiveFailures).toBe(0);

    failing = true;
    for (let i = 3; i < 3 + MAX_FAILURES; i++) await emit(siteId, 'content.published', content(i));
    await exhaust();
    const disabled = (await api.get(`/v1/webhooks/${w.id}`)).body.data;
    expect(disabled).toMatchObject({ isActive: false, consecutiveFailures: MAX_FAILURES, disabledReason: `${MAX_FAILURES} deliveries in a row failed.` });
    expect((await deliveries(api, w.id, '&status=failed')).length).toBe(1 + MAX_FAILURES);
    [d] = await deliveries(api, w.id, '&status=succeeded');
    expect(d.payload.data.id).toBe(2);

    const requestsBefore = rec.requests.length;
    await emit(siteId, 'content.published', content(99));
    await drain();
    expect(rec.requests).toHaveLength(requestsBefore);

    const on = await api.put(`/v1/webhooks/${w.id}`, { isActive: true });
    expect(on.body.data).toMatchObject({ isActive: true, consecutiveFailures: 0, disabledReason: null });
  });

  it(`counts a receiver that does not answer within the timeout (${TIMEOUT_MS} ms) as a failure`, async () => {
    const rec = await receiver(() => {
      /* never answers */
    });
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    await emit(siteId, 'content.published', content(1));
    const started = Date.now();
    await drain();
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1500);
    const [d] = await deliveries(api, w.id);
    expect(d).toMatchObject({ status: 'pending', attemptCount: 1, lastStatusCode: null, lastError: `timeout: no answer within ${TIMEOUT_MS} ms` });
    expect(d.attempts[0].durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(rec.requests).toHaveLength(1);
  });

  it('does not follow redirects: a 302 is a failed attempt', async () => {
    const target = await receiver();
    const rec = await receiver((_req, res) => {
      res.writeHead(302, { location: target.url });
      res.end();
    });
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    await emit(siteId, 'content.published', content(1));
    await drain();
    const [d] = await deliveries(api, w.id);
    expect(d).toMatchObject({ status: 'pending', lastStatusCode: 302, lastError: 'HTTP 302: redirects are not followed' });
    expect(target.requests).toHaveLength(0);
  });

  it('reads only the start of a large (here endless) response body', async () => {
    let closed = false;
    const rec = await receiver((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(16 * 1024);
      const timer = setInterval(() => res.write(chunk), 1);
      req.socket.on('close', () => {
        closed = true;
        clearInterval(timer);
      });
    });
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    await emit(siteId, 'content.published', content(1));
    const started = Date.now();
    await drain();
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
    const [d] = await deliveries(api, w.id);
    expect(d.status).toBe('succeeded');
    expect(d.attempts[0].responseBodyExcerpt).toBe('x'.repeat(RESPONSE_EXCERPT_LIMIT));
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(true);
  });

  it('sends each due delivery once, even with several workers claiming at the same time', async () => {
    const rec = await receiver();
    const { api, siteId } = await site();
    const a = await hook(api, rec.url);
    const b = await hook(api, `${rec.origin}/other`);
    for (let i = 1; i <= 15; i++) await emit(siteId, 'content.published', content(i));
    await ctx.app.worker.tick(); // dispatch (and a first delivery pass)
    const settings = deliverySettings(ctx.config, loadSecretBox(ctx.config.secrets, ctx.config.dataDir).box);
    const workerCtx = { db: ctx.app.database.db, log: ctx.app.log };
    for (let round = 0; round < 10; round++) {
      await Promise.all([deliverDue(workerCtx, settings, 4), deliverDue(workerCtx, settings, 4), deliverDue(workerCtx, settings, 4)]);
    }
    const ids = rec.requests.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    for (const w of [a, b]) expect((await deliveries(api, w.id, '&status=succeeded')).every((d) => d.attemptCount === 1)).toBe(true);
  });

  it('leaves a claimed delivery alone while its lock lasts, and sends it after (a worker that died mid-send)', async () => {
    const rec = await receiver();
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    await emit(siteId, 'content.published', content(1));
    const db = ctx.app.database.db;
    await drain();
    expect(rec.requests).toHaveLength(1);
    // A second event, fanned out, then claimed by a worker that dies before sending.
    await emit(siteId, 'content.published', content(2));
    await dispatchOutbox({ db });
    const now = new Date();
    const claimed = await repo.claimDueDeliveries(db, now.toISOString(), new Date(now.getTime() + 60_000).toISOString(), 10);
    expect(claimed.filter((d) => d.site_id === siteId)).toHaveLength(1);
    await drain();
    expect(rec.requests).toHaveLength(1);
    await db
      .updateTable('webhook_deliveries')
      .set({ locked_until: new Date(Date.now() - 1).toISOString() })
      .where('site_id', '=', siteId)
      .where('status', '=', 'pending')
      .execute();
    await drain();
    expect(rec.requests.map((r) => JSON.parse(r.body).data.id)).toEqual([1, 2]);
    expect((await deliveries(api, w.id)).every((d) => d.status === 'succeeded')).toBe(true);
  });
});

// ------------------------------------------------------------------------------------------------
// Secret rotation, the test event, redelivery
// ------------------------------------------------------------------------------------------------

describe('rotation, test events and redelivery', () => {
  it('rotates the secret: new signatures verify with the new secret; the old one also signs for 24 hours', async () => {
    const rec = await receiver();
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    const rotated = await api.post(`/v1/webhooks/${w.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const secret = rotated.body.data.secret as string;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(w.secret);
    expect(rotated.body.data).toMatchObject({ id: w.id, url: rec.url, isActive: true });
    await emit(siteId, 'content.published', content(1));
    await drain();
    const [first] = rec.requests;
    const signatures = String(first!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    expect(verifies(secret, { ...first!, headers: { ...first!.headers, 'webhook-signature': signatures[0] } })).toBe(true);
    expect(verifies(w.secret, { ...first!, headers: { ...first!.headers, 'webhook-signature': signatures[1] } })).toBe(true);

    await ctx.app.database.db
      .updateTable('webhooks')
      .set({ previous_secret_expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', w.id)
      .execute();
    await emit(siteId, 'content.published', content(2));
    await drain();
    const second = rec.requests[1]!;
    expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(secret, second)).toBe(true);
    expect(verifies(w.secret, second)).toBe(false);
  });

  it('sends a signed webhook.test event at once and answers the delivery with its attempt', async () => {
    const rec = await receiver();
    const { api } = await site();
    const w = await hook(api, rec.url);
    const res = await api.post(`/v1/webhooks/${w.id}/test`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      webhookId: w.id,
      eventId: null,
      eventType: 'webhook.test',
      status: 'succeeded',
      attemptCount: 1,
      lastStatusCode: 200,
      messageId: expect.stringMatching(/^msg_test_[0-9a-f]{32}$/),
      payload: { type: 'webhook.test', data: { webhookId: w.id } },
    });
    expect(res.body.data.attempts).toHaveLength(1);
    expect(rec.requests).toHaveLength(1);
    expect(verifies(w.secret, rec.requests[0]!)).toBe(true);
    expect(JSON.parse(rec.requests[0]!.body)).toEqual(res.body.data.payload);
    expect(rec.requests[0]!.headers['webhook-id']).toBe(res.body.data.messageId);
  });

  it('never retries a failed test event nor lets it change the webhook, even a 410', async () => {
    const rec = await receiver(statuses(410));
    const { api } = await site();
    const w = await hook(api, rec.url);
    const res = await api.post(`/v1/webhooks/${w.id}/test`);
    expect(res.body.data).toMatchObject({ status: 'failed', attemptCount: 1, lastStatusCode: 410, nextAttemptAt: null });
    expect((await api.get(`/v1/webhooks/${w.id}`)).body.data).toMatchObject({ isActive: true, consecutiveFailures: 0 });
    const down = await receiver();
    await down.close();
    const dead = await hook(api, down.url);
    const refused = await api.post(`/v1/webhooks/${dead.id}/test`);
    expect(refused.body.data).toMatchObject({ status: 'failed', lastStatusCode: null, lastError: expect.stringContaining('ECONNREFUSED') });
  });

  it('redelivers a delivery now with the same webhook-id and body; 409 while the webhook is inactive', async () => {
    const rec = await receiver();
    const { api, siteId } = await site();
    const w = await hook(api, rec.url);
    await emit(siteId, 'content.published', content(1));
    await drain();
    const [d] = await deliveries(api, w.id);
    const res = await api.post(`/v1/webhooks/${w.id}/deliveries/${d.id}/redeliver`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: d.id, status: 'pending', attemptCount: 1, nextAttemptAt: expect.any(String) });
    expect(Date.parse(res.body.data.nextAttemptAt)).toBeLessThanOrEqual(Date.now());
    await drain();
    expect(rec.requests).toHaveLength(2);
    expect(rec.requests[1]!.headers['webhook-id']).toBe(rec.requests[0]!.headers['webhook-id']);
    expect(rec.requests[1]!.body).toBe(rec.requests[0]!.body);
    const after = await api.get(`/v1/webhooks/${w.id}/deliveries/${d.id}`);
    expect(after.body.data).toMatchObject({ status: 'succeeded', attemptCount: 2 });
    expect(after.body.data.attempts).toHaveLength(2);

    await api.put(`/v1/webhooks/${w.id}`, { isActive: false });
    const refused = await api.post(`/v1/webhooks/${w.id}/deliveries/${d.id}/redeliver`);
    expect(refused.status).toBe(409);
    expectErrorShape(refused.body, 409, 'WEBHOOK_INACTIVE');
    const other = await hook(api, rec.url);
    expect((await api.post(`/v1/webhooks/${other.id}/deliveries/${d.id}/redeliver`)).status).toBe(404);
    expect((await api.get(`/v1/webhooks/${other.id}/deliveries/${d.id}`)).status).toBe(404);
    expect((await api.get(`/v1/webhooks/${w.id}/deliveries/999999`)).status).toBe(404);
  });

  it('lists deliveries with pagination and status and event filters', async () => {
    const rec = await receiver(statuses(200, 500));
    const { api, siteId } = await site();
    const w = await hook(api, rec.url, ['*']);
    await emit(siteId, 'content.published', content(1));
    await drain();
    await emit(siteId, 'content.archived', content(1, 'archived'));
    await drain();
    const page = await api.get(`/v1/webhooks/${w.id}/deliveries?limit=1`);
    expect(page.body.meta).toEqual({ total: 2, perPage: 1, currentPage: 1, lastPage: 2 });
    expect(page.body.data[0].eventType).toBe('content.archived');
    expect((await deliveries(api, w.id, '&status=pending')).map((d) => d.eventType)).toEqual(['content.archived']);
    expect((await deliveries(api, w.id, '&eventType=content.published')).map((d) => d.status)).toEqual(['succeeded']);
    expect((await api.get(`/v1/webhooks/${w.id}/deliveries?status=lost`)).status).toBe(422);
  });
});

// ------------------------------------------------------------------------------------------------
// Safety
// ------------------------------------------------------------------------------------------------

describe('safety', () => {
  let strict: TestContext;
  beforeAll(async () => {
    strict = await buildTestApp({ allowPrivateNetwork: false, webhooks: { timeoutMs: TIMEOUT_MS, maxFailures: MAX_FAILURES } });
  });
  afterAll(() => strict.close());

  it('refuses loopback, private and metadata URLs with 422 WEBHOOK_URL_INVALID unless private networks are allowed', async () => {
    const rec = await receiver();
    const { api } = await site(strict.app);
    for (const url of [
      rec.url,
      'http://localhost:8080/x',
      'http://[::1]/x',
      'http://10.0.0.8/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
    ]) {
      const res = await api.post('/v1/webhooks', { url, events: ['content.published'] });
      expect(res.status, url).toBe(422);
      expectErrorShape(res.body, 422, 'WEBHOOK_URL_INVALID');
      expect(res.body.errors).toHaveProperty('url');
    }
    const ok = await api.post('/v1/webhooks', { url: 'https://93.184.216.34/hook', events: ['content.published'] });
    expect(ok.status).toBe(201);
    const upd = await api.put(`/v1/webhooks/${ok.body.data.id}`, { url: rec.url });
    expect(upd.status).toBe(422);
    expectErrorShape(upd.body, 422, 'WEBHOOK_URL_INVALID');
    // The same URL is fine where private networks are allowed (tests, closed networks).
    expect((await (await site()).api.post('/v1/webhooks', { url: rec.url, events: ['content.published'] })).status).toBe(201);
  });

  it('checks the address again at every attempt: a webhook whose URL became private gets nothing', async () => {
    const rec = await receiver();
    const { siteId, api } = await site(strict.app);
    const w = (await api.post('/v1/webhooks', { url: 'https://93.184.216.34/hook', events: ['content.published'] })).body.data;
    // As if the name now resolved to loopback: the stored URL points at the local receiver.
    await strict.app.database.db.updateTable('webhooks').set({ url: rec.url }).where('id', '=', w.id).execute();
    await emit(siteId, 'content.published', content(1), strict.app);
    await drain(strict.app);
    expect(rec.requests).toEqual([]);
    const [d] = await deliveries(api, w.id);
    expect(d).toMatchObject({ status: 'pending', lastStatusCode: null, lastError: expect.stringMatching(/^blocked: /) });
    const test = await api.post(`/v1/webhooks/${w.id}/test`);
    expect(test.body.data).toMatchObject({ status: 'failed', lastError: expect.stringMatching(/^blocked: /) });
    expect(rec.requests).toEqual([]);
    // A host name is resolved and checked at connect time (guardedLookup), not only IP literals.
    await strict.app.database.db
      .updateTable('webhooks')
      .set({ url: rec.url.replace('127.0.0.1', 'localhost') })
      .where('id', '=', w.id)
      .execute();
    const byName = await api.post(`/v1/webhooks/${w.id}/test`);
    expect(byName.body.data).toMatchObject({ status: 'failed', lastStatusCode: null, lastError: expect.stringMatching(/^blocked: localhost resolves to/) });
    expect(rec.requests).toEqual([]);
  });

  it('never writes a secret to the logs', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logged = await buildTestApp({ webhooks: { timeoutMs: 300, maxFailures: 1 } }, { logger: { level: 'trace', stream } });
    try {
      const rec = await receiver(statuses(500, 410, 200));
      const { api, siteId } = await site(logged.app);
      const w = await hook(api, rec.url, ['*']);
      const rotated = (await api.post(`/v1/webhooks/${w.id}/rotate-secret`)).body.data.secret as string;
      await api.post(`/v1/webhooks/${w.id}/test`);
      await emit(siteId, 'content.published', content(1), logged.app);
      await drain(logged.app);
      await makeDue(siteId, logged.app);
      await drain(logged.app);
      await api.put(`/v1/webhooks/${w.id}`, { isActive: true, url: 'ftp://nope' });
      const text = lines.join('');
      expect(lines.length).toBeGreaterThan(5);
      expect(text).toContain('webhook attempt failed');
      for (const secret of [w.secret, rotated]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(secret.slice(6));
        expect(text).not.toContain(secret.slice(6, 30));
      }
      expect(text).not.toContain('webhook-signature');
      expect(text).not.toMatch(/v1,[A-Za-z0-9+/]{43}=/);
    } finally {
      await logged.close();
    }
  });
});

// ------------------------------------------------------------------------------------------------
// Crash between commit and delivery
// ------------------------------------------------------------------------------------------------

describe('a crash after the commit and before delivery', () => {
  it('delivers after a restart on the same database', async () => {
    const rec = await receiver();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-webhooks-'));
    const overrides = TEST_DIALECT === 'sqlite' ? { databaseUrl: path.join(dir, 'crash.db') } : {};
    const first = await buildTestApp(overrides);
    let second: TestContext | undefined;
    try {
      const { api, siteId } = await site(first.app);
      const w = await hook(api, rec.url);
      await emit(siteId, 'content.published', content(1), first.app);
      // "Crash": the process goes away without its worker ever running.
      await first.app.close();
      expect(rec.requests).toEqual([]);

      second = await buildTestApp({ ...overrides, ...(TEST_DIALECT === 'postgres' ? { pgSchema: first.config.pgSchema } : {}) });
      await drain(second.app);
      expect(rec.requests).toHaveLength(1);
      expect(verifies(w.secret, rec.requests[0]!)).toBe(true);
      expect(JSON.parse(rec.requests[0]!.body).data).toEqual(content(1));
    } finally {
      await second?.close();
      await first.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ------------------------------------------------------------------------------------------------
// End to end with the contents endpoints
// ------------------------------------------------------------------------------------------------

describe('end to end with contents', () => {
  it('a bulk publish of three drafts delivers three verified content.published events; an already-published id produces none', async () => {
    const rec = await receiver();
    const { api } = await site();
    const w = await hook(api, rec.url);
    const create = async (title: string) => {
      const res = await api.post('/v1/contents', { type: 'post', title, bodyMarkdown: `About ${title}` });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.data.status).toBe('draft');
      return res.body.data.id as number;
    };
    const already = await create('Already out');
    expect((await api.post('/v1/contents/bulk/publish', { ids: [already] })).body).toEqual({ published: 1 });
    await drain();
    expect(rec.requests).toHaveLength(1);

    const drafts = [await create('First'), await create('Second'), await create('Third')];
    const res = await api.post('/v1/contents/bulk/publish', { ids: [...drafts, already] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ published: 3 });
    await drain();
    const fresh = rec.requests.slice(1);
    expect(fresh).toHaveLength(3);
    for (const r of fresh) expect(verifies(w.secret, r)).toBe(true);
    const bodies = fresh.map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => b.type)).toEqual(['content.published', 'content.published', 'content.published']);
    expect(bodies.map((b) => b.data.id).sort((a, b) => a - b)).toEqual([...drafts].sort((a, b) => a - b));
    for (const b of bodies) {
      expect(b.data).toMatchObject({ title: expect.any(String), slug: expect.any(String), locale: 'en', status: 'published', publishedAt: expect.any(String) });
    }
    expect(new Set(fresh.map((r) => r.headers['webhook-id'])).size).toBe(3);

    // Publishing them again produces nothing.
    expect((await api.post('/v1/contents/bulk/publish', { ids: drafts })).body).toEqual({ published: 0 });
    await drain();
    expect(rec.requests).toHaveLength(4);
  });
});

describe('the OpenAPI document', () => {
  it('describes every event Cairn sends under `webhooks`, with its data shape', async () => {
    const ctxDoc = await buildTestApp();
    try {
      const doc = (await ctxDoc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
      expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual(expect.arrayContaining(['content.archived', 'content.published']));
      expect(JSON.stringify(doc.webhooks['content.published'])).toContain('publishedAt');
    } finally {
      await ctxDoc.close();
    }
  });

  it('takes each event from the module that emits it, and refuses an event described twice or by none', () => {
    const byModule = Object.fromEntries(MODULES.map((m) => [m.name, Object.keys(m.events ?? {})]));
    expect(byModule).toMatchObject({
      contents: ['content.published', 'content.archived'],
      'site-blocks': ['site_block.published', 'site_block.unpublished'],
      forms: ['form.submitted'],
      media: ['media.uploaded', 'media.replaced', 'media.deleted'],
      webhooks: [],
    });
    expect(Object.keys(describedEvents(MODULES))).toEqual([...EVENT_TYPES]);
    const media = MODULES.find((m) => m.name === 'media')!;
    const twice: AppModule = { name: 'twice', routes() {}, events: { 'media.deleted': media.events!['media.deleted']! } };
    expect(() => describedEvents([...MODULES, twice])).toThrow('The event media.deleted is described by the modules media and twice');
    expect(() => describedEvents(MODULES.filter((m) => m !== media))).toThrow('No module describes the events media.uploaded, media.replaced, media.deleted');
  });
});
