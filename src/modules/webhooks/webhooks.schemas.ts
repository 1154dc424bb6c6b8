import { Type, type TSchema } from 'typebox';
import { EVENT_TYPES } from '../../jobs/outbox.js';
import { listQuerySchema } from '../../shared/pagination.js';
import { Id, IdParams, Nullable, named, Timestamp } from '../../shared/schemas.js';
import type { EventDescriptions } from '../types.js';

// ---- the event catalog (each event described by the module that emits it: AppModule.events) ----

/** The type sent by `POST /webhooks/:id/test`; not an event one subscribes to. */
export const TEST_EVENT_TYPE = 'webhook.test';

export const ALL_EVENTS = '*';

/** The body POSTed to a webhook for one event. */
export function EventEnvelope<T extends TSchema, D extends TSchema>(type: T, data: D, description?: string) {
  return Type.Object(
    {
      type,
      timestamp: { ...Timestamp, description: 'When the event happened (ISO 8601 UTC)' },
      data,
    },
    description ? { description } : {},
  );
}

/** A delivery's body as the API shows it: the envelope of any event type. */
export const EventPayload = EventEnvelope(
  Type.String({ description: 'The event type, e.g. content.published' }),
  Type.Object({}, { additionalProperties: true, description: 'The event data; its shape per type is in GET /webhooks/events' }),
  'The exact JSON body that was (or will be) POSTed',
);

export const EventTypeName = Type.Enum([...EVENT_TYPES, ALL_EVENTS], {
  description: `An event of the catalog, or \`${ALL_EVENTS}\` for every event, present and future`,
});

/** The answer of GET /webhooks/events, its description naming the data fields of each event. */
export function eventCatalogSchema(events: EventDescriptions) {
  const item = Type.Object(
    {
      type: Type.String({ description: 'The event type' }),
      description: Type.String(),
      dataSchema: Type.Object({}, { additionalProperties: true, description: 'JSON Schema of `data`' }),
      example: EventPayload,
    },
    {
      description:
        'One event of the catalog. Data of the events: ' +
        EVENT_TYPES.map((t) => `\`${t}\`: ${Object.keys((events[t].data as { properties?: object }).properties ?? {}).join(', ')}`).join('; '),
    },
  );
  return Type.Object({ data: Type.Array(item) });
}

/**
 * The OpenAPI 3.1 `webhooks` object: one entry per event, describing the request Cairn sends
 * (the envelope with the event's data schema). For registerOpenApi to pass as `openapi.webhooks`.
 */
export function openApiWebhooks(events: EventDescriptions): Record<string, unknown> {
  const headers = [
    { name: 'webhook-id', description: 'The message id, the same at every attempt: use it to drop duplicates', schema: { type: 'string' } },
    { name: 'webhook-timestamp', description: 'Unix seconds of this attempt', schema: { type: 'string' } },
    {
      name: 'webhook-signature',
      description: 'Space-separated `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed by the base64-decoded secret after `whsec_`',
      schema: { type: 'string' },
    },
  ].map((h) => ({ ...h, in: 'header', required: true }));
  const out: Record<string, unknown> = {};
  for (const type of EVENT_TYPES) {
    out[type] = {
      post: {
        summary: type,
        description: events[type].description,
        parameters: headers,
        requestBody: { required: true, content: { 'application/json': { schema: EventEnvelope(Type.Literal(type), events[type].data) } } },
        responses: { '2XX': { description: 'Received. Anything else (or no answer within the timeout) is retried; 410 disables the webhook.' } },
      },
    };
  }
  return out;
}

/** How deliveries are signed and retried, for the route descriptions. */
export const SIGNING =
  'Each event is POSTed as JSON `{ type, timestamp, data }` with the Standard Webhooks headers `webhook-id` (the same at every ' +
  'attempt), `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed by ' +
  'the base64-decoded part of the secret after `whsec_`). A 2xx within the timeout is success; anything else is retried with backoff ' +
  '(about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, ±20%; a longer `Retry-After` is honoured) for about a day. A 410 disables the webhook, ' +
  'and so do WEBHOOK_MAX_FAILURES deliveries in a row that failed for good. Redirects are not followed.';

// ---- deliveries ----

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
const DeliveryStatus = Type.Enum(DELIVERY_STATUSES);

export const Attempt = Type.Object({
  id: Type.Integer(),
  attemptedAt: Timestamp,
  statusCode: Nullable(Type.Integer({ description: 'The HTTP status answered; null when none came (timeout, refused, blocked address)' })),
  durationMs: Type.Integer(),
  error: Nullable(Type.String()),
  responseBodyExcerpt: Nullable(Type.String({ description: 'The start of the response body (at most 1 KiB; only 4 KiB are ever read)' })),
});

export const Delivery = Type.Object({
  id: Type.Integer(),
  webhookId: Type.Integer(),
  eventId: Nullable(Type.Integer({ description: 'The event (outbox) id; null for test events' })),
  messageId: Type.String({ description: 'The `webhook-id` header, the same at every attempt' }),
  eventType: Type.String(),
  payload: EventPayload,
  status: DeliveryStatus,
  attemptCount: Type.Integer(),
  nextAttemptAt: Nullable({ ...Timestamp, description: 'When the next attempt is due (pending only)' }),
  lastStatusCode: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  attempts: Type.Array(Attempt, { description: 'Every attempt, oldest first' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const DeliveryListQuery = listQuerySchema(
  ['created_at', 'updated_at'],
  {
    status: Type.Optional(DeliveryStatus),
    eventType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { defaultSort: 'created_at desc' },
);

export const DeliveryParams = Type.Object({
  id: IdParams.properties.id,
  deliveryId: Id(),
});

/** The response schemas by name in OpenAPI (components.schemas). */
export const DeliveryRef = named('WebhookDelivery', Delivery);
