import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Kysely } from 'kysely';
import { classifyDbError } from '../db/db-errors.js';
import { RequestTransaction, withRequestTransaction } from '../db/request-transaction.js';
import type { DB } from '../db/types.js';
import { AppError, invalid } from '../shared/errors.js';
import { findAnswer, type StoredAnswer, storeAnswer } from './idempotency.repository.js';

/** How long a key answers with its first answer (Stripe's rule); older keys are ignored and swept. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Visible ASCII, 1-255 characters (a UUID is the usual choice). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The reusable OpenAPI parameter every create references (components.parameters.IdempotencyKey). */
export const IDEMPOTENCY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retried create safe (decisions HR4): the same key with the same method, path and body within 24 hours answers the first answer ' +
    '(with `Idempotent-Replayed: true`) without doing the work again; the same key with another request is a 422 `IDEMPOTENCY_KEY_REUSED`. ' +
    'Keys are per token and site; 1-255 visible ASCII characters (a UUID). Only successful answers are kept, stored in the same transaction as the write.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
} as const;

interface Pending {
  held: RequestTransaction;
  siteId: string;
  tokenId: string;
  key: string;
  hash: string;
}

const pending = new WeakMap<FastifyRequest, Pending>();

/**
 * Test-only: milliseconds to wait after a create's transaction (write and stored answer) has
 * committed and before the answer is sent, so a fault test can kill the process in between.
 * Never set in production.
 */
const PAUSE_AFTER_COMMIT_MS = Number(process.env.CAIRN_TEST_PAUSE_AFTER_COMMIT_MS ?? 0);

/** The routes that create: POST routes of a token scope that answer 201. */
function isCreate(route: RouteOptions): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const responses = ((route.schema as { response?: Record<string, unknown> } | undefined)?.response ?? {}) as Record<string, unknown>;
  return methods.includes('POST') && '201' in responses && route.config?.scope !== 'public' && route.url.startsWith('/v1/');
}

/** The method, path and body; a body the handler streams (an upload) is known by its media type and length (a retry draws a new boundary). */
function requestHash(req: FastifyRequest): string {
  const streamed = () => `${String(req.headers['content-type'] ?? '').split(';')[0]}:${req.headers['content-length'] ?? ''}`;
  const body = req.body === undefined ? streamed() : JSON.stringify(req.body);
  return createHash('sha256').update(`${req.method} ${req.url}\n${body}`).digest('hex');
}

function replay(reply: FastifyReply, stored: StoredAnswer) {
  if (stored.content_type) reply.header('content-type', stored.content_type);
  return reply.code(stored.status_code).header('idempotent-replayed', 'true').send(stored.body);
}

/**
 * `Idempotency-Key` on every create (issue 36 item 13, decisions HR4). Before the handler: a
 * stored answer for the key is sent again (or a 422 when the request differs). Otherwise the
 * handler runs in one request transaction (db/request-transaction.ts) and, as the answer is
 * sent, a successful answer is stored in that transaction and committed with the write; a
 * failed one rolls everything back. Answers the OpenAPI paths (`/v1/contents`) it applies to.
 */
export function registerIdempotency(app: FastifyInstance, db: Kysely<DB>): Set<string> {
  const documented = new Set<string>();
  const since = () => new Date(Date.now() - IDEMPOTENCY_WINDOW_MS).toISOString();

  app.addHook('onRoute', (route) => {
    if (!isCreate(route)) return;
    documented.add(`post ${route.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
    const preHandler = async (req: FastifyRequest, reply: FastifyReply) => {
      const key = req.headers[IDEMPOTENCY_HEADER];
      if (key === undefined || !req.auth) return;
      if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
        throw invalid('VALIDATION_FAILED', 'Idempotency-Key', 'The Idempotency-Key header must be 1-255 visible ASCII characters.');
      }
      const hash = requestHash(req);
      const stored = await findAnswer(db, req.auth.siteId, req.auth.tokenId, key, since());
      if (stored) {
        if (stored.request_hash !== hash) throw new AppError('IDEMPOTENCY_KEY_REUSED', { errors: { 'Idempotency-Key': [ERROR_REUSED] } });
        return replay(reply, stored);
      }
      pending.set(req, { held: new RequestTransaction(db), siteId: req.auth.siteId, tokenId: req.auth.tokenId, key, hash });
    };
    route.preHandler = [...toArray(route.preHandler), preHandler] as RouteOptions['preHandler'];
    // The handler and all it starts run with the request transaction in scope.
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, req, reply) {
      const state = pending.get(req);
      return state ? withRequestTransaction(state.held, () => handler.call(this, req, reply)) : handler.call(this, req, reply);
    };
    // On the creates only: no other route carries these hooks (issue 37). Added before the
    // delivery cache's own onSend (app.ts registers this first), so the answer is stored and
    // committed before the write moves its site's generation on.
    route.onSend = [...toArray(route.onSend), storeIdempotentAnswer] as RouteOptions['onSend'];
    route.onResponse = [...toArray(route.onResponse), releaseIdempotentTransaction] as RouteOptions['onResponse'];
    route.onRequestAbort = [...toArray(route.onRequestAbort), releaseIdempotentTransaction] as RouteOptions['onRequestAbort'];
  });

  // Before the answer leaves (and before a write moves its site's generation on): store and commit, or roll back.
  const storeIdempotentAnswer = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const state = pending.get(req);
    if (!state) return payload;
    pending.delete(req);
    const ok = reply.statusCode < 300 && typeof payload === 'string';
    if (!ok) {
      await state.held.rollback();
      return payload;
    }
    try {
      const tx = await state.held.open();
      await storeAnswer(
        tx,
        {
          site_id: state.siteId,
          token_id: state.tokenId,
          key: state.key,
          request_hash: state.hash,
          status_code: reply.statusCode,
          content_type: String(reply.getHeader('content-type') ?? '') || null,
          body: payload,
          created_at: new Date().toISOString(),
        },
        since(),
      );
      await state.held.commit();
    } catch (err) {
      await state.held.rollback().catch(() => undefined);
      // Another request with the same key committed first (it waited on the key's index): its answer is this one's.
      const stored = classifyDbError(err)?.kind === 'unique' ? await findAnswer(db, state.siteId, state.tokenId, state.key, since()) : undefined;
      if (stored && stored.request_hash === state.hash) {
        if (stored.content_type) reply.header('content-type', stored.content_type);
        reply.code(stored.status_code).header('idempotent-replayed', 'true');
        return stored.body;
      }
      const error = stored
        ? new AppError('IDEMPOTENCY_KEY_REUSED', { errors: { 'Idempotency-Key': [ERROR_REUSED] } })
        : new AppError('SERVICE_UNAVAILABLE', { message: 'The write could not be committed; retry with the same Idempotency-Key.' });
      req.log.warn({ err: { message: (err as Error).message } }, 'idempotent create not committed');
      reply.code(error.statusCode).header('content-type', 'application/json; charset=utf-8');
      return JSON.stringify(error.toBody());
    }
    if (PAUSE_AFTER_COMMIT_MS > 0) await sleep(PAUSE_AFTER_COMMIT_MS);
    return payload;
  };
  // A request that ends without sending (the client went away mid-handler): nothing it did stays.
  const releaseIdempotentTransaction = async (req: FastifyRequest) => {
    const state = pending.get(req);
    if (!state) return;
    pending.delete(req);
    await state.held.rollback().catch(() => undefined);
  };
  return documented;
}

const ERROR_REUSED = 'This key was used with another request in the last 24 hours; use a new key for a new request.';

function toArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}
