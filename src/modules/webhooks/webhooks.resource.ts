import { Type } from 'typebox';
import { dialectOf } from '../../db/dialect.js';
import { now, parseJson, toJson } from '../../db/json.js';
import { common, fieldMap } from '../../kit/fields.js';
import { resource } from '../../kit/resource.js';
import { invalid } from '../../shared/errors.js';
import { checkOutboundUrl } from '../../shared/net-guard.js';
import { named, Nullable, ref, Timestamp } from '../../shared/schemas.js';
import { type DeliverySettings, generateSecret } from './webhooks.delivery.js';
import './webhooks.repository.js';
import { ALL_EVENTS, EventTypeName, SIGNING } from './webhooks.schemas.js';

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL that resolves to public addresses' });
const Events = Type.Array(EventTypeName, { minItems: 1, maxItems: 50, uniqueItems: true });

/** `["*"]` stands alone: with it, the other types add nothing. */
const normalizeEvents = (events: string[]) => toJson(events.includes(ALL_EVENTS) ? [ALL_EVENTS] : events);

/** Spec "Webhook" (decisions G15): the API shape, the bodies, the row and the patch. */
export const webhookFields = fieldMap({
  id: common.id,
  url: { column: 'url', schema: Type.String(), input: Url, create: 'required' },
  description: { column: 'description', schema: Nullable(Type.String()), input: Nullable(Type.String({ maxLength: 500 })) },
  events: { column: 'events', schema: Type.Array(Type.String()), input: Events, create: 'required', read: (v) => parseJson(v, []), write: normalizeEvents },
  isActive: {
    column: 'is_active',
    schema: Type.Boolean(),
    input: Type.Boolean({ default: true }),
    updateInput: Type.Boolean({ description: '`true` re-enables a disabled webhook and resets its failure counter' }),
    read: Boolean,
    insertDefault: true,
  },
  consecutiveFailures: {
    column: 'consecutive_failures',
    schema: Type.Integer({ description: 'Deliveries in a row that failed for good; the webhook is disabled at WEBHOOK_MAX_FAILURES' }),
    read: Number,
  },
  disabledReason: {
    column: 'disabled_reason',
    schema: Nullable(
      Type.String({ description: 'Why the service disabled the webhook (410 Gone, too many failures); null when active or turned off by an update' }),
    ),
  },
  disabledAt: { column: 'disabled_at', schema: Nullable(Timestamp) },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

export const WebhookWithSecretRef = named(
  'WebhookWithSecret',
  Type.Object({
    ...webhookFields.response().properties,
    secret: Type.String({ description: 'The signing secret `whsec_<base64>`. Shown only here: on create and on rotation.' }),
  }),
);

/** http(s) only, and every address public unless CAIRN_ALLOW_PRIVATE_NETWORK (checked again at every attempt). */
async function checkedUrl(url: string, allowPrivate: boolean): Promise<string> {
  const check = await checkOutboundUrl(url.trim(), { allowPrivate });
  if (!check.ok) throw invalid('WEBHOOK_URL_INVALID', 'url', `The URL ${check.reason}.`);
  return check.url.href;
}

/** Webhooks on the resource kit; the routes take the delivery settings (secret box, private-network switch). */
export const webhooks = resource({
  table: 'webhooks',
  noun: 'webhook',
  name: 'Webhook',
  plural: 'Webhooks',
  path: '/webhooks',
  scope: 'webhooks',
  fields: webhookFields,
  list: {
    sort: ['created_at', 'updated_at', 'url'],
    search: [],
    common: [],
    filters: {
      search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive search in url and description' })),
      isActive: Type.Optional(Type.Boolean()),
    },
    apply(qb, query: { search?: string; isActive?: boolean }, { db }) {
      if (query.search) qb = qb.where(dialectOf(db).containsText(['url', 'description'], query.search));
      return query.isActive === undefined ? qb : qb.where('is_active', '=', query.isActive);
    },
  },
  rules: {
    /** The URL is checked (a DNS lookup) before the transaction. */
    async prepare(_db, { input, context }: { input: Record<string, any>; context: DeliverySettings }) {
      input.url = await checkedUrl(input.url, context.allowPrivateNetwork);
    },
    /** A new signing secret, stored encrypted and shown once in the answer. */
    create(_tx, { row, answer, context }) {
      const secret = generateSecret();
      row.secret = context.secrets.encrypt(secret);
      Object.assign(row, { previous_secret: null, previous_secret_expires_at: null, consecutive_failures: 0, disabled_reason: null, disabled_at: null });
      answer.secret = secret;
    },
    /** `isActive: true` re-enables a webhook the service disabled (410, too many failures) and resets its failure counter. */
    async update(_tx, { input, patch, context }) {
      if (input.url !== undefined) patch.url = await checkedUrl(input.url, context.allowPrivateNetwork);
      if (input.isActive === true) Object.assign(patch, { consecutive_failures: 0, disabled_reason: null, disabled_at: null });
      if (input.isActive === false) Object.assign(patch, { disabled_reason: null, disabled_at: now() });
    },
  },
  docs: {
    create: {
      summary: 'Create a webhook; the answer shows its signing secret, once',
      description: `The URL must be http(s) and resolve to public addresses (422 \`WEBHOOK_URL_INVALID\` on \`url\`). ${SIGNING}`,
      data: ref(WebhookWithSecretRef),
    },
    update: { description: '`isActive: true` re-enables a webhook the service disabled and resets its failure counter; its paused deliveries go on.' },
    delete: { summary: 'Delete a webhook with its delivery log' },
  },
});
