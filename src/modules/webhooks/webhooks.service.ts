import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Executor } from '../../db/types.js';
import { now, parseJson } from '../../db/json.js';
import { AppError, notFound } from '../../shared/errors.js';
import { pageMeta } from '../../shared/pagination.js';
import { EVENT_TYPES } from '../../jobs/outbox.js';
import * as repo from './webhooks.repository.js';
import { TEST_EVENT_TYPE, type DeliveryListQuery } from './webhooks.schemas.js';
import { webhooks } from './webhooks.resource.js';
import type { SecretBox } from '../../shared/secrets.js';
import type { EventDescriptions } from '../types.js';
import { attemptDelivery, eventBody, generateSecret, PREVIOUS_SECRET_TTL_MS, type DeliverySettings } from './webhooks.delivery.js';

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

const getRow = (db: Executor, siteId: string, id: number) => webhooks.service.getRow(db, siteId, id);

export function eventCatalog(events: EventDescriptions) {
  return {
    data: EVENT_TYPES.map((type) => {
      const entry = events[type];
      return {
        type,
        description: entry.description,
        dataSchema: JSON.parse(JSON.stringify(entry.data)) as Record<string, unknown>,
        example: { type, timestamp: '2026-11-22T10:00:00.000Z', data: entry.example },
      };
    }),
  };
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
  return { ...(await webhooks.service.get(db, siteId, id)), secret };
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
