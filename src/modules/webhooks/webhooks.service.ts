import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Executor } from '../../db/types.js';
import { now, parseJson, toJson } from '../../db/json.js';
import { AppError, invalid, notFound } from '../../shared/errors.js';
import { pageMeta } from '../../shared/pagination.js';
import { checkOutboundUrl } from '../../shared/net-guard.js';
import { EVENT_TYPES } from '../../jobs/outbox.js';
import * as repo from './webhooks.repository.js';
import {
  ALL_EVENTS,
  EVENT_CATALOG,
  TEST_EVENT_TYPE,
  type DeliveryListQuery,
  type WebhookCreateInput,
  type WebhookListQuery,
  type WebhookUpdateInput,
} from './webhooks.schemas.js';
import type { SecretBox } from '../../shared/secrets.js';
import { attemptDelivery, eventBody, generateSecret, PREVIOUS_SECRET_TTL_MS, type DeliverySettings } from './webhooks.delivery.js';

function toWebhook(r: repo.WebhookRow) {
  return {
    id: Number(r.id),
    url: r.url,
    description: r.description,
    events: parseJson<string[]>(r.events, []),
    isActive: Boolean(r.is_active),
    consecutiveFailures: Number(r.consecutive_failures),
    disabledReason: r.disabled_reason,
    disabledAt: r.disabled_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toAttempt(a: repo.AttemptRow) {
  return {
    id: Number(a.id),
    attemptedAt: a.attempted_at,
    statusCode: a.status_code === null ? null : Number(a.status_code),
    durationMs: Number(a.duration_ms),
    error: a.error,
    responseBodyExcerpt: a.response_body_excerpt,
  };
}

function toDelivery(d: repo.DeliveryRow, attempts: repo.AttemptRow[]) {
  return {
    id: Number(d.id),
    webhookId: Number(d.webhook_id),
    eventId: d.event_id === null ? null : Number(d.event_id),
    messageId: d.message_id,
    eventType: d.event_type,
    payload: parseJson<{ type: string; timestamp: string; data: Record<string, unknown> }>(d.payload, {
      type: d.event_type,
      timestamp: d.created_at,
      data: {},
    }),
    status: d.status,
    attemptCount: Number(d.attempts),
    nextAttemptAt: d.status === 'pending' ? d.next_attempt_at : null,
    lastStatusCode: d.last_status_code === null ? null : Number(d.last_status_code),
    lastError: d.last_error,
    attempts: attempts.map(toAttempt),
    createdAt: d.created_at,
    updatedAt: d.updated_at,
  };
}

async function getRow(db: Executor, siteId: string, id: number): Promise<repo.WebhookRow> {
  const row = await repo.findWebhook(db, siteId, id);
  if (!row) throw notFound('webhook');
  return row;
}

/** http(s) only, and every address public unless CAIRN_ALLOW_PRIVATE_NETWORK (checked again at every attempt). */
async function assertUrl(url: string, allowPrivate: boolean): Promise<string> {
  const check = await checkOutboundUrl(url.trim(), { allowPrivate });
  if (!check.ok) throw invalid('WEBHOOK_URL_INVALID', 'url', `The URL ${check.reason}.`);
  return check.url.href;
}

/** `["*"]` stands alone: with it, the other types add nothing. */
function normalizeEvents(events: string[]): string[] {
  return events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events;
}

export function eventCatalog() {
  return {
    data: EVENT_TYPES.map((type) => {
      const entry = EVENT_CATALOG[type];
      return {
        type,
        description: entry.description,
        dataSchema: JSON.parse(JSON.stringify(entry.data)) as Record<string, unknown>,
        example: { type, timestamp: '2026-11-22T10:00:00.000Z', data: entry.example },
      };
    }),
  };
}

export async function listWebhooks(db: Executor, siteId: string, query: Static<typeof WebhookListQuery>) {
  const { rows, total } = await repo.listWebhooks(db, siteId, query);
  return { data: rows.map(toWebhook), meta: pageMeta(total, query.page, query.limit) };
}

export async function getWebhook(db: Executor, siteId: string, id: number) {
  return toWebhook(await getRow(db, siteId, id));
}

export async function createWebhook(db: Db, settings: DeliverySettings, siteId: string, input: WebhookCreateInput) {
  const url = await assertUrl(input.url, settings.allowPrivateNetwork);
  const at = now();
  const secret = generateSecret();
  const id = await repo.insertWebhook(db, {
    site_id: siteId,
    url,
    description: input.description ?? null,
    events: toJson(normalizeEvents(input.events)),
    is_active: input.isActive ?? true,
    secret: settings.secrets.encrypt(secret),
    previous_secret: null,
    previous_secret_expires_at: null,
    consecutive_failures: 0,
    disabled_reason: null,
    disabled_at: null,
    created_at: at,
    updated_at: at,
  });
  return { ...(await getWebhook(db, siteId, id)), secret };
}

/**
 * Partial update. `isActive: true` re-enables a webhook the service disabled (410, too many
 * failures) and resets its failure counter; its paused pending deliveries then go on.
 */
export async function updateWebhook(db: Db, allowPrivate: boolean, siteId: string, id: number, input: WebhookUpdateInput) {
  await getRow(db, siteId, id);
  const url = input.url !== undefined ? await assertUrl(input.url, allowPrivate) : undefined;
  const at = now();
  const patch: Parameters<typeof repo.updateWebhook>[3] = { updated_at: at };
  if (url !== undefined) patch.url = url;
  if (input.events !== undefined) patch.events = toJson(normalizeEvents(input.events));
  if (input.description !== undefined) patch.description = input.description;
  if (input.isActive === true) Object.assign(patch, { is_active: true, consecutive_failures: 0, disabled_reason: null, disabled_at: null });
  if (input.isActive === false) Object.assign(patch, { is_active: false, disabled_reason: null, disabled_at: at });
  await repo.updateWebhook(db, siteId, id, patch);
  return getWebhook(db, siteId, id);
}

export async function deleteWebhook(db: Db, siteId: string, id: number) {
  if (!(await repo.deleteWebhook(db, siteId, id))) throw notFound('webhook');
}

/** A new secret, shown once; the previous one keeps signing (a second signature) for 24 hours. */
export async function rotateSecret(db: Db, secrets: SecretBox, siteId: string, id: number) {
  const row = await getRow(db, siteId, id);
  const secret = generateSecret();
  const at = new Date();
  await repo.updateWebhook(db, siteId, id, {
    secret: secrets.encrypt(secret),
    previous_secret: row.secret,
    previous_secret_expires_at: new Date(at.getTime() + PREVIOUS_SECRET_TTL_MS).toISOString(),
    updated_at: at.toISOString(),
  });
  return { ...(await getWebhook(db, siteId, id)), secret };
}

async function deliveryWithAttempts(db: Executor, siteId: string, d: repo.DeliveryRow) {
  const attempts = await repo.attemptsOf(db, siteId, [Number(d.id)]);
  return toDelivery(d, attempts.get(Number(d.id)) ?? []);
}

/**
 * Sends a `webhook.test` event now, signed and guarded like any delivery, and answers the
 * delivery with its attempt. Sent even to an inactive webhook (to check it before enabling it);
 * never retried, and never changes the webhook's state or failure counter.
 */
export async function sendTest(db: Db, settings: DeliverySettings, log: FastifyBaseLogger, siteId: string, id: number) {
  const webhook = await getRow(db, siteId, id);
  const at = now();
  const body = eventBody(TEST_EVENT_TYPE, at, { webhookId: id, message: 'A test event from Cairn: signature and endpoint check.' });
  const deliveryId = await repo.insertDelivery(db, {
    site_id: siteId,
    webhook_id: id,
    event_id: null,
    message_id: `msg_test_${randomUUID().replace(/-/g, '')}`,
    event_type: TEST_EVENT_TYPE,
    payload: body,
    status: 'pending',
    attempts: 0,
    cycle_attempts: 0,
    next_attempt_at: null,
    locked_until: null,
    last_status_code: null,
    last_error: null,
    created_at: at,
    updated_at: at,
  });
  const delivery = (await repo.findDelivery(db, siteId, id, deliveryId))!;
  await attemptDelivery(db, settings, log, delivery, webhook);
  return deliveryWithAttempts(db, siteId, (await repo.findDelivery(db, siteId, id, deliveryId))!);
}

export async function listDeliveries(db: Executor, siteId: string, webhookId: number, query: Static<typeof DeliveryListQuery>) {
  await getRow(db, siteId, webhookId);
  const { rows, total } = await repo.listDeliveries(db, siteId, webhookId, query);
  const attempts = await repo.attemptsOf(
    db,
    siteId,
    rows.map((r) => Number(r.id)),
  );
  return { data: rows.map((r) => toDelivery(r, attempts.get(Number(r.id)) ?? [])), meta: pageMeta(total, query.page, query.limit) };
}

async function getDeliveryRow(db: Executor, siteId: string, webhookId: number, deliveryId: number) {
  const row = await repo.findDelivery(db, siteId, webhookId, deliveryId);
  if (!row) throw notFound('delivery');
  return row;
}

export async function getDelivery(db: Executor, siteId: string, webhookId: number, deliveryId: number) {
  return deliveryWithAttempts(db, siteId, await getDeliveryRow(db, siteId, webhookId, deliveryId));
}

/**
 * Schedules a delivery again, due now, with a fresh retry schedule, whatever its status; the
 * worker sends it (same message id, same body). 409 WEBHOOK_INACTIVE while the webhook is off.
 */
export async function redeliver(db: Db, siteId: string, webhookId: number, deliveryId: number) {
  const webhook = await getRow(db, siteId, webhookId);
  const row = await getDeliveryRow(db, siteId, webhookId, deliveryId);
  if (!webhook.is_active) throw new AppError('WEBHOOK_INACTIVE');
  const at = now();
  await repo.updateDelivery(db, Number(row.id), { status: 'pending', cycle_attempts: 0, next_attempt_at: at, updated_at: at });
  return getDelivery(db, siteId, webhookId, deliveryId);
}
