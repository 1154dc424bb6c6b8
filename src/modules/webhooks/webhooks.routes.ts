import type { AppModule } from '../types.js';
import { Data, IdParams, Paginated, ref } from '../../shared/schemas.js';
import { DeliveryRef, DeliveryListQuery, DeliveryParams, eventCatalogSchema, SIGNING } from './webhooks.schemas.js';
import { WebhookWithSecretRef, webhooks } from './webhooks.resource.js';
import * as service from './webhooks.service.js';
import { deliverDue, deliverySettings, dispatchOutbox } from './webhooks.delivery.js';
import { deleteFinishedDeliveries } from './webhooks.repository.js';
import { retentionTask } from '../../jobs/retention.js';

const tags = ['Webhooks'];

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

    const r = webhooks.routes(db, settings);
    for (const route of [r.list, r.create, r.get, r.update, r.delete]) app.route(route);

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
