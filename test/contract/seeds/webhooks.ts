import type { Client } from '../../helpers/http.js';
import type { Seed } from '../seeds.js';

/** The contract app allows private networks; nothing listens on port 9, so a test event fails fast. */
async function createWebhook(api: Client): Promise<number> {
  const res = await api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['content.published'] });
  if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

export const webhookSeeds: Record<string, Seed> = {
  '/v1/webhooks/:id': async (api) => ({ params: { id: await createWebhook(api) }, body: { description: 'Renamed' } }),
  '/v1/webhooks/:id/deliveries/:deliveryId': async (api) => {
    const id = await createWebhook(api);
    const res = await api.post(`/v1/webhooks/${id}/test`);
    if (res.status !== 200) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    return { params: { id, deliveryId: res.body.data.id } };
  },
};
