import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db/types.js';
import type { JobContext } from '../../jobs/worker.js';
import { parseJson } from '../../db/json.js';
import { type AttemptResult, postGuarded } from '../../shared/outbound.js';
import * as repo from './webhooks.repository.js';
import { ALL_EVENTS } from './webhooks.schemas.js';
import { SecretKeyError, type SecretBox } from '../../shared/secrets.js';

/**
 * Webhook delivery (decisions G15), on the outbox that changes write to in their own transaction:
 * - dispatch: outbox events -> one delivery per active subscribed webhook, in one transaction;
 * - deliver: due deliveries -> one signed POST each (Standard Webhooks), attempt logged, retried
 *   with backoff until about a day has passed.
 */

export interface DeliverySettings {
  timeoutMs: number;
  maxFailures: number;
  allowPrivateNetwork: boolean;
  /** Opens the signing secrets, stored encrypted (decisions H25). */
  secrets: SecretBox;
}

/** Failed attempt n (1-based) waits RETRY_SCHEDULE_MS[n-1] (±20%) before the next; after the last, the delivery has failed. */
export const RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
/** A Retry-After longer than the schedule's delay is honoured, up to this. */
export const RETRY_AFTER_CAP_MS = 36_000_000;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;
/** After a rotation the previous secret keeps signing (a second signature) for this long. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;
const DISPATCH_BATCH = 100;
const DELIVER_BATCH = 20;
const USER_AGENT = 'Cairn-Webhooks/1';

// ---- signing (Standard Webhooks) ----

/** `whsec_` + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** base64 HMAC-SHA256 of `${msgId}.${timestamp}.${body}`, keyed by the base64-decoded part after `whsec_`. */
export function sign(secret: string, msgId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return createHmac('sha256', key).update(`${msgId}.${timestamp}.${body}`).digest('base64');
}

/** The secrets that sign now, opened: the current one, and the previous one while its rotation grace lasts. */
export function signingSecrets(
  webhook: Pick<repo.WebhookRow, 'secret' | 'previous_secret' | 'previous_secret_expires_at'>,
  now: Date,
  secrets: SecretBox,
): string[] {
  const out = [secrets.decrypt(webhook.secret)];
  if (webhook.previous_secret && webhook.previous_secret_expires_at && Date.parse(webhook.previous_secret_expires_at) > now.getTime()) {
    out.push(secrets.decrypt(webhook.previous_secret));
  }
  return out;
}

export function signedHeaders(secrets: string[], msgId: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': msgId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => `v1,${sign(s, msgId, timestamp, body)}`).join(' '),
  };
}

// ---- sending ----

export { RESPONSE_EXCERPT_LIMIT, RESPONSE_READ_LIMIT } from '../../shared/outbound.js';

// ---- outcome rules ----

/** The wait before attempt `failedAttempts + 1`, with ±20% jitter; a longer Retry-After wins, up to the cap. */
export function retryDelay(failedAttempts: number, retryAfterMs: number | null, random = Math.random): number {
  const base = RETRY_SCHEDULE_MS[Math.min(failedAttempts, RETRY_SCHEDULE_MS.length) - 1]!;
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  return retryAfterMs !== null && retryAfterMs > jittered ? Math.min(retryAfterMs, RETRY_AFTER_CAP_MS) : jittered;
}

interface Outcome {
  delivery: repo.DeliveryRow;
  webhook: repo.WebhookRow;
  result: AttemptResult;
  at: Date;
}

/**
 * Records one attempt and what follows from it, in one transaction: success; 410 (the webhook is
 * disabled); a retry after the backoff; or, after the last attempt, a failed delivery, which
 * counts towards disabling the webhook. Test events never change the webhook.
 */
export async function recordAttempt(
  db: Db,
  settings: DeliverySettings,
  log: FastifyBaseLogger,
  { delivery, webhook, result, at }: Outcome,
): Promise<repo.DeliveryStatus> {
  const siteId = delivery.site_id;
  const deliveryId = Number(delivery.id);
  const webhookId = Number(webhook.id);
  const iso = at.toISOString();
  const affectsWebhook = delivery.event_id !== null;
  return db.transaction().execute(async (tx) => {
    await repo.insertAttempt(tx, {
      site_id: siteId,
      delivery_id: deliveryId,
      attempted_at: iso,
      status_code: result.statusCode,
      duration_ms: result.durationMs,
      error: result.error,
      response_body_excerpt: result.bodyExcerpt,
    });
    const common = {
      attempts: Number(delivery.attempts) + 1,
      locked_until: null,
      last_status_code: result.statusCode,
      last_error: result.error,
      updated_at: new Date().toISOString(),
    };
    if (result.ok) {
      await repo.updateDelivery(tx, deliveryId, { ...common, status: 'succeeded', next_attempt_at: null });
      if (affectsWebhook) await repo.resetFailures(tx, siteId, webhookId, iso);
      return 'succeeded';
    }
    const cycle = Number(delivery.cycle_attempts) + 1;
    const gone = result.statusCode === 410 && affectsWebhook;
    if (gone || cycle >= MAX_ATTEMPTS || !affectsWebhook) {
      await repo.updateDelivery(tx, deliveryId, { ...common, cycle_attempts: cycle, status: 'failed', next_attempt_at: null });
      if (gone) {
        await repo.disableWebhook(tx, siteId, webhookId, 'The receiver answered 410 Gone.', iso);
        log.warn({ webhookId, deliveryId }, 'webhook disabled: the receiver answered 410 Gone');
      } else if (affectsWebhook) {
        const failures = await repo.incrementFailures(tx, siteId, webhookId, iso);
        if (failures >= settings.maxFailures) {
          await repo.disableWebhook(tx, siteId, webhookId, `${failures} deliveries in a row failed.`, iso);
          log.warn({ webhookId, failures }, 'webhook disabled after consecutive failed deliveries');
        }
      }
      return 'failed';
    }
    const next = new Date(at.getTime() + result.durationMs + retryDelay(cycle, result.retryAfterMs)).toISOString();
    await repo.updateDelivery(tx, deliveryId, { ...common, cycle_attempts: cycle, status: 'pending', next_attempt_at: next });
    return 'pending';
  });
}

/** Sends one delivery to its webhook and records the attempt. */
export async function attemptDelivery(
  db: Db,
  settings: DeliverySettings,
  log: FastifyBaseLogger,
  delivery: repo.DeliveryRow,
  webhook: repo.WebhookRow,
): Promise<repo.DeliveryStatus> {
  const at = new Date();
  let result: AttemptResult;
  try {
    const headers = signedHeaders(signingSecrets(webhook, at, settings.secrets), delivery.message_id, delivery.payload, at);
    result = await postGuarded(webhook.url, headers, delivery.payload, settings);
  } catch (err) {
    // A secret under a key this process lacks: nothing is sent unsigned; the attempt says why.
    if (!(err instanceof SecretKeyError)) throw err;
    log.error({ webhookId: Number(webhook.id), error: err.message }, 'webhook secret cannot be opened');
    result = { ok: false, statusCode: null, durationMs: 0, error: err.message, bodyExcerpt: null, retryAfterMs: null };
  }
  if (!result.ok)
    log.info({ webhookId: Number(webhook.id), deliveryId: Number(delivery.id), statusCode: result.statusCode, error: result.error }, 'webhook attempt failed');
  return recordAttempt(db, settings, log, { delivery, webhook, result, at });
}

// ---- the worker's tasks ----

export function subscribes(events: string[], type: string): boolean {
  return events.includes(ALL_EVENTS) || events.includes(type);
}

export function messageId(eventId: number, webhookId: number): string {
  return `msg_${eventId}_${webhookId}`;
}

/** The body POSTed for an event: `{ type, timestamp, data }`, fixed once so every attempt sends the same bytes. */
export function eventBody(type: string, timestamp: string, data: unknown): string {
  return JSON.stringify({ type, timestamp, data });
}

/**
 * "webhooks.dispatch": claims undispatched outbox events in id order and, in the same
 * transaction, creates one delivery per active webhook of the site subscribed to the type and
 * marks the events dispatched. A crash before the commit leaves the events undispatched; the
 * unique (site, message id) makes a second fan-out of one event harmless.
 */
export async function dispatchOutbox(ctx: Pick<JobContext, 'db'>, limit = DISPATCH_BATCH): Promise<number> {
  return ctx.db.transaction().execute(async (tx) => {
    const at = new Date().toISOString();
    const events = await repo.claimOutboxEvents(tx, at, limit);
    if (events.length === 0) return 0;
    const webhooks = await repo.activeWebhooksOfSites(tx, [...new Set(events.map((e) => e.site_id))]);
    const rows = [];
    for (const event of events) {
      const body = eventBody(event.type, event.created_at, parseJson(event.payload, {}));
      for (const w of webhooks) {
        if (w.site_id !== event.site_id || !subscribes(parseJson<string[]>(w.events, []), event.type)) continue;
        rows.push({
          site_id: event.site_id,
          webhook_id: Number(w.id),
          event_id: Number(event.id),
          message_id: messageId(Number(event.id), Number(w.id)),
          event_type: event.type,
          payload: body,
          status: 'pending' as const,
          attempts: 0,
          cycle_attempts: 0,
          next_attempt_at: at,
          locked_until: null,
          last_status_code: null,
          last_error: null,
          created_at: at,
          updated_at: at,
        });
      }
    }
    await repo.insertDeliveries(tx, rows);
    return events.length;
  });
}

/**
 * "webhooks.deliver": claims due deliveries (no two workers claim the same) and sends them.
 * Deliveries of one webhook go out one after the other, oldest first; after a failure the rest
 * of that webhook's batch is handed back for the next pass, so a dead receiver costs one timeout
 * per pass, not one per delivery. Different webhooks are sent to in parallel.
 */
export async function deliverDue(ctx: JobContext, settings: DeliverySettings, limit = DELIVER_BATCH): Promise<number> {
  const now = new Date();
  // Long enough for a whole batch to time out one after the other; a crashed worker's claims come back after it.
  const lockedUntil = new Date(now.getTime() + settings.timeoutMs * (limit + 1) + 60_000).toISOString();
  const claimed = await repo.claimDueDeliveries(ctx.db, now.toISOString(), lockedUntil, limit);
  if (claimed.length === 0) return 0;
  const webhooks = new Map((await repo.webhooksByIds(ctx.db, [...new Set(claimed.map((d) => Number(d.webhook_id)))])).map((w) => [Number(w.id), w]));
  const groups = new Map<number, repo.DeliveryRow[]>();
  for (const d of claimed) (groups.get(Number(d.webhook_id)) ?? groups.set(Number(d.webhook_id), []).get(Number(d.webhook_id))!).push(d);
  await Promise.all(
    [...groups].map(async ([webhookId, list]) => {
      try {
        await sendGroup(webhookId, list);
      } catch (err) {
        // E.g. the webhook was deleted mid-send. Its claims expire and come back; other webhooks go on.
        ctx.log.error({ webhookId, error: err instanceof Error ? err.message : String(err) }, 'webhook delivery pass failed');
      }
    }),
  );
  return claimed.length;

  async function sendGroup(webhookId: number, list: repo.DeliveryRow[]) {
    list.sort((a, b) => Number(a.event_id ?? 0) - Number(b.event_id ?? 0) || Number(a.id) - Number(b.id));
    for (let i = 0; i < list.length; i++) {
      const webhook = webhooks.get(webhookId);
      if (!webhook) {
        await repo.releaseDeliveries(
          ctx.db,
          list.slice(i).map((d) => Number(d.id)),
        );
        break;
      }
      const status = await attemptDelivery(ctx.db, settings, ctx.log, list[i]!, webhook);
      if (status !== 'succeeded') {
        await repo.releaseDeliveries(
          ctx.db,
          list.slice(i + 1).map((d) => Number(d.id)),
        );
        break;
      }
      // An update may have turned it off, or changed its URL or secret, meanwhile: read it again before the next.
      if (i + 1 < list.length) {
        const [fresh] = await repo.webhooksByIds(ctx.db, [webhookId]);
        if (!fresh?.is_active) {
          await repo.releaseDeliveries(
            ctx.db,
            list.slice(i + 1).map((d) => Number(d.id)),
          );
          break;
        }
        webhooks.set(webhookId, fresh);
      }
    }
  }
}

/** The delivery settings from the configuration. */
export function deliverySettings(
  config: { allowPrivateNetwork: boolean; webhooks: { timeoutMs: number; maxFailures: number } },
  secrets: SecretBox,
): DeliverySettings {
  return { timeoutMs: config.webhooks.timeoutMs, maxFailures: config.webhooks.maxFailures, allowPrivateNetwork: config.allowPrivateNetwork, secrets };
}
