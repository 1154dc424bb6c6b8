import { Type, type Static, type TSchema } from 'typebox';
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

const EventTypeName = Type.Enum([...EVENT_TYPES, ALL_EVENTS], {
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

// ---- webhooks ----

export const Webhook = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  description: Nullable(Type.String()),
  events: Type.Array(Type.String()),
  isActive: Type.Boolean(),
  consecutiveFailures: Type.Integer({ description: 'Deliveries in a row that failed for good; the webhook is disabled at WEBHOOK_MAX_FAILURES' }),
  disabledReason: Nullable(
    Type.String({ description: 'Why the service disabled the webhook (410 Gone, too many failures); null when active or turned off by an update' }),
  ),
  disabledAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const WebhookWithSecret = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'The signing secret `whsec_<base64>`. Shown only here: on create and on rotation.' }),
});

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL that resolves to public addresses' });
const Events = Type.Array(EventTypeName, { minItems: 1, maxItems: 50, uniqueItems: true });
const Description = Nullable(Type.String({ maxLength: 500 }));

export const WebhookCreate = Type.Object({
  url: Url,
  events: Events,
  description: Type.Optional(Description),
  isActive: Type.Optional(Type.Boolean({ default: true })),
});

export const WebhookUpdate = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    isActive: Type.Optional(Type.Boolean({ description: '`true` re-enables a disabled webhook and resets its failure counter' })),
  },
  { minProperties: 1 },
);

export const WebhookListQuery = listQuerySchema(
  ['created_at', 'updated_at', 'url'],
  {
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive search in url and description' })),
    isActive: Type.Optional(Type.Boolean()),
  },
  { defaultSort: 'created_at desc' },
);

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

export type WebhookCreateInput = Static<typeof WebhookCreate>;
export type WebhookUpdateInput = Static<typeof WebhookUpdate>;

/** The response schemas by name in OpenAPI (components.schemas). */
export const WebhookRef = named('Webhook', Webhook);
export const WebhookWithSecretRef = named('WebhookWithSecret', WebhookWithSecret);
export const DeliveryRef = named('WebhookDelivery', Delivery);
