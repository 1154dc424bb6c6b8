import { Type, type TSchema } from 'typebox';
import { EVENT_TYPES, type EventType } from '../../jobs/outbox.js';
import { listQuerySchema } from '../../shared/pagination.js';
import { Id, IdParams, Nullable, named, Timestamp } from '../../shared/schemas.js';

// ---- the event catalog ----

/** `data` of content events: the content as it is after the change (decisions G15). */
export const ContentEventData = Type.Object(
  {
    id: Type.Integer({ description: 'The content id' }),
    title: Type.String(),
    slug: Type.String(),
    locale: Type.String({ description: 'BCP 47 language tag' }),
    status: Type.String({ description: 'The status after the change: `published` or `archived`' }),
    publishedAt: Nullable(Timestamp),
    url: Type.Optional(Type.String({ description: 'The public URL of the content, when the site has one' })),
  },
  { additionalProperties: true },
);

/** `data` of site-block events: the block as it is after the change. */
export const SiteBlockEventData = Type.Object(
  {
    id: Type.Integer({ description: 'The site block id' }),
    name: Type.String(),
    slug: Type.String(),
    type: Type.String({ description: '`global` or `page`' }),
    path: Nullable(Type.String({ description: "A page block's path" })),
    locale: Type.String({ description: 'BCP 47 language tag' }),
    status: Type.String({ description: 'The status after the change: `published` or `draft`' }),
    publishedAt: Nullable(Timestamp),
  },
  { additionalProperties: true },
);

const siteBlockExample = (status: string) => ({
  id: 7,
  name: 'Header',
  slug: 'header',
  type: 'global',
  path: null,
  locale: 'en',
  status,
  publishedAt: status === 'published' ? '2026-11-22T10:00:00.000Z' : null,
});

/** `data` of form.submitted: the stored submission (not spam) and its form. */
export const FormSubmittedEventData = Type.Object(
  {
    formId: Type.Integer(),
    formSlug: Type.String(),
    locale: Type.String({ description: "The form's locale" }),
    submissionId: Type.Integer(),
    data: Type.Object({}, { additionalProperties: true, description: 'The submitted values, keyed by field name, as stored' }),
    createdAt: Timestamp,
  },
  { additionalProperties: true },
);

/** `data` of media events: the file as it is (uploaded) or was (deleted). */
export const MediaEventData = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    filename: Type.String(),
    mimeType: Type.String(),
    size: Type.Integer(),
  },
  { additionalProperties: true },
);
const mediaExample = { id: '5b0e8c4e-2f7a-4e57-9a57-0d1c8f0a3b21', filename: 'sunset.jpg', mimeType: 'image/jpeg', size: 482113 };

/** The type sent by `POST /webhooks/:id/test`; not an event one subscribes to. */
export const TEST_EVENT_TYPE = 'webhook.test';

interface CatalogEntry {
  description: string;
  data: TSchema;
  example: Record<string, unknown>;
}

const contentExample = (status: string) => ({
  id: 42,
  title: 'Hello world',
  slug: 'hello-world',
  locale: 'en',
  status,
  publishedAt: '2026-11-22T10:00:00.000Z',
});

/**
 * Every event a webhook can subscribe to, with its `data` schema. Keyed by the outbox's
 * EVENT_TYPES, so an event added there fails to compile until it is described here.
 */
export const EVENT_CATALOG: Record<EventType, CatalogEntry> = {
  'content.published': {
    description: 'A content was published: by POST /contents/bulk/publish, a status change, or the scheduler. One event per content.',
    data: ContentEventData,
    example: contentExample('published'),
  },
  'content.archived': {
    description: 'A content was archived (POST /contents/bulk/archive or a status change). One event per content.',
    data: ContentEventData,
    example: contentExample('archived'),
  },
  'site_block.published': {
    description: 'A site block was published (POST /site-blocks/:slug/publish), or, with staged publishing, its staged edits went live.',
    data: SiteBlockEventData,
    example: siteBlockExample('published'),
  },
  'site_block.unpublished': {
    description: 'A published site block was unpublished (POST /site-blocks/:slug/unpublish): hidden from delivery tokens and public reads.',
    data: SiteBlockEventData,
    example: siteBlockExample('draft'),
  },
  'form.submitted': {
    description: 'A visitor submitted a form (POST /v1/public/forms/:slug/submissions) and it was stored; submissions stored as spam send nothing.',
    data: FormSubmittedEventData,
    example: {
      formId: 3,
      formSlug: 'contact',
      locale: 'en',
      submissionId: 57,
      data: { name: 'Ada', email: 'ada@example.com' },
      createdAt: '2026-11-22T10:00:00.000Z',
    },
  },
  'media.uploaded': { description: 'A file was uploaded to the media library (POST /media/upload).', data: MediaEventData, example: mediaExample },
  'media.replaced': {
    description: 'A file got new bytes under the same id and URL (POST /media/:id/replace); its ETag changed.',
    data: MediaEventData,
    example: mediaExample,
  },
  'media.deleted': {
    description: 'A file was removed for good: force-deleted, in an emptied trash or purged 30 days after it was trashed, or with its folder.',
    data: MediaEventData,
    example: mediaExample,
  },
};

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

const CatalogItem = Type.Object(
  {
    type: Type.String({ description: 'The event type' }),
    description: Type.String(),
    dataSchema: Type.Object({}, { additionalProperties: true, description: 'JSON Schema of `data`' }),
    example: EventPayload,
  },
  {
    description:
      'One event of the catalog. Data of the events: ' +
      EVENT_TYPES.map((t) => `\`${t}\`: ${Object.keys((EVENT_CATALOG[t].data as { properties?: object }).properties ?? {}).join(', ')}`).join('; '),
  },
);

export const EventCatalog = Type.Object({ data: Type.Array(CatalogItem) });

/** The envelope of each event with its data schema, for the OpenAPI document (GET /webhooks/events answers them as examples). */
export const EventEnvelopes = Object.fromEntries(EVENT_TYPES.map((type) => [type, EventEnvelope(Type.Literal(type), EVENT_CATALOG[type].data)]));

/**
 * The OpenAPI 3.1 `webhooks` object: one entry per event, describing the request Cairn sends.
 * For registerOpenApi to pass as `openapi.webhooks`.
 */
export function openApiWebhooks(): Record<string, unknown> {
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
        description: EVENT_CATALOG[type].description,
        parameters: headers,
        requestBody: { required: true, content: { 'application/json': { schema: EventEnvelopes[type] } } },
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
