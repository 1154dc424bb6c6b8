import type { AppModule } from '../types.js';
import { Data, IdParams, Message, Paginated, ref } from '../../shared/schemas.js';
import {
  DeliveryRef,
  DeliveryListQuery,
  DeliveryParams,
  eventCatalogSchema,
  WebhookRef,
  WebhookCreate,
  WebhookListQuery,
  WebhookUpdate,
  WebhookWithSecretRef,
} from './webhooks.schemas.js';
import * as service from './webhooks.service.js';
import { deliverDue, deliverySettings, dispatchOutbox } from './webhooks.delivery.js';
import { deleteFinishedDeliveries } from './webhooks.repository.js';
import { retentionTask } from '../../jobs/retention.js';

const tags = ['Webhooks'];

const SIGNING =
  'Each event is POSTed as JSON `{ type, timestamp, data }` with the Standard Webhooks headers `webhook-id` (the same at every ' +
  'attempt), `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`, keyed by ' +
  'the base64-decoded part of the secret after `whsec_`). A 2xx within the timeout is success; anything else is retried with backoff ' +
  '(about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, ±20%; a longer `Retry-After` is honoured) for about a day. A 410 disables the webhook, ' +
  'and so do WEBHOOK_MAX_FAILURES deliveries in a row that failed for good. Redirects are not followed.';

/** Webhooks: management, the delivery log, and the worker tasks that deliver the outbox (decisions G15). */
export const webhooksModule: AppModule = {
  name: 'webhooks',
  routes(app, { db, config, secrets, events }) {
    const settings = deliverySettings(config, secrets);

    app.get(
      '/webhooks/events',
      {
        config: { scope: 'webhooks.view' },
        schema: {
          tags,
          operationId: 'listWebhookEvents',
          summary: 'The event catalog: every event type with the schema of its data',
          description: `The events a webhook can subscribe to (\`*\` subscribes to all, present and future). ${SIGNING}`,
          response: { 200: eventCatalogSchema(events) },
        },
      },
      async () => service.eventCatalog(events),
    );

    app.get(
      '/webhooks',
      {
        config: { scope: 'webhooks.view' },
        schema: { tags, operationId: 'listWebhooks', summary: 'List webhooks', querystring: WebhookListQuery, response: { 200: Paginated(ref(WebhookRef)) } },
      },
      async (req) => service.listWebhooks(db, req.auth.siteId, req.query),
    );

    app.post(
      '/webhooks',
      {
        config: { scope: 'webhooks.create' },
        schema: {
          tags,
          operationId: 'createWebhook',
          summary: 'Create a webhook; the answer shows its signing secret, once',
          description: `The URL must be http(s) and resolve to public addresses (422 \`WEBHOOK_URL_INVALID\` on \`url\`). ${SIGNING}`,
          body: WebhookCreate,
          response: { 201: Data(ref(WebhookWithSecretRef)) },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await service.createWebhook(db, settings, req.auth.siteId, req.body) }),
    );

    app.get(
      '/webhooks/:id',
      {
        config: { scope: 'webhooks.view' },
        schema: { tags, operationId: 'getWebhook', summary: 'Get a webhook', params: IdParams, response: { 200: Data(ref(WebhookRef)) } },
      },
      async (req) => ({ data: await service.getWebhook(db, req.auth.siteId, req.params.id) }),
    );

    app.put(
      '/webhooks/:id',
      {
        config: { scope: 'webhooks.update' },
        schema: {
          tags,
          operationId: 'updateWebhook',
          summary: 'Update a webhook (partial)',
          description: '`isActive: true` re-enables a webhook the service disabled and resets its failure counter; its paused deliveries go on.',
          params: IdParams,
          body: WebhookUpdate,
          response: { 200: Data(ref(WebhookRef)) },
        },
      },
      async (req) => ({ data: await service.updateWebhook(db, config.allowPrivateNetwork, req.auth.siteId, req.params.id, req.body) }),
    );

    app.delete(
      '/webhooks/:id',
      {
        config: { scope: 'webhooks.delete' },
        schema: { tags, operationId: 'deleteWebhook', summary: 'Delete a webhook with its delivery log', params: IdParams, response: { 200: Message } },
      },
      async (req) => {
        await service.deleteWebhook(db, req.auth.siteId, req.params.id);
        return { message: 'Webhook deleted.' };
      },
    );

    app.post(
      '/webhooks/:id/rotate-secret',
      {
        config: { scope: 'webhooks.update' },
        schema: {
          tags,
          operationId: 'rotateWebhookSecret',
          summary: 'Replace the signing secret; the answer shows the new one, once',
          description:
            'For 24 hours the previous secret signs too: `webhook-signature` carries both `v1,` signatures, so receivers can switch without losing events.',
          params: IdParams,
          response: { 200: Data(ref(WebhookWithSecretRef)) },
        },
      },
      async (req) => ({ data: await service.rotateSecret(db, secrets, req.auth.siteId, req.params.id) }),
    );

    app.post(
      '/webhooks/:id/test',
      {
        config: { scope: 'webhooks.test' },
        schema: {
          tags,
          operationId: 'testWebhook',
          summary: 'Send a webhook.test event now and answer the delivery with its attempt',
          description:
            'Signed and guarded like every delivery; sent even when the webhook is inactive; never retried and never counted as a failure of the webhook.',
          params: IdParams,
          response: { 200: Data(ref(DeliveryRef)) },
        },
      },
      async (req) => ({ data: await service.sendTest(db, settings, req.log, req.auth.siteId, req.params.id) }),
    );

    app.get(
      '/webhooks/:id/deliveries',
      {
        config: { scope: 'webhooks.view' },
        schema: {
          tags,
          operationId: 'listWebhookDeliveries',
          summary: 'The delivery log: deliveries with their attempts, newest first',
          params: IdParams,
          querystring: DeliveryListQuery,
          response: { 200: Paginated(ref(DeliveryRef)) },
        },
      },
      async (req) => service.listDeliveries(db, req.auth.siteId, req.params.id, req.query),
    );

    app.get(
      '/webhooks/:id/deliveries/:deliveryId',
      {
        config: { scope: 'webhooks.view' },
        schema: {
          tags,
          operationId: 'getWebhookDelivery',
          summary: 'A delivery with every attempt',
          params: DeliveryParams,
          response: { 200: Data(ref(DeliveryRef)) },
        },
      },
      async (req) => ({ data: await service.getDelivery(db, req.auth.siteId, req.params.id, req.params.deliveryId) }),
    );

    app.post(
      '/webhooks/:id/deliveries/:deliveryId/redeliver',
      {
        config: { scope: 'webhooks.update' },
        schema: {
          tags,
          operationId: 'redeliverWebhookDelivery',
          summary: 'Schedule a delivery again, now, with a fresh retry schedule',
          description: 'Same `webhook-id` and body. 409 `WEBHOOK_INACTIVE` while the webhook is inactive.',
          params: DeliveryParams,
          response: { 200: Data(ref(DeliveryRef)), 409: { $ref: 'Error#' } },
        },
      },
      async (req) => ({ data: await service.redeliver(db, req.auth.siteId, req.params.id, req.params.deliveryId) }),
    );
  },

  jobs(worker, { config, secrets }) {
    const settings = deliverySettings(config, secrets);
    worker.task('webhooks.dispatch', (ctx) => dispatchOutbox(ctx));
    worker.task('webhooks.deliver', (ctx) => deliverDue(ctx, settings));
    worker.task('retention.webhook_deliveries', retentionTask(config.retention.webhookDeliveriesDays, deleteFinishedDeliveries));
  },
};
