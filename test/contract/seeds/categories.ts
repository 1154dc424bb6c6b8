import { randomUUID } from 'node:crypto';
import type { Seed } from '../seeds.js';

export const categorySeeds: Record<string, Seed> = {
  '/v1/categories/:id': async (api, route) => {
    const res = await api.post('/v1/categories', { name: `Category ${randomUUID()}` });
    if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    const body = route.url.endsWith('copy-to-locale') ? { targetLocale: 'en' } : { name: `Renamed ${randomUUID()}` };
    return { params: { id: res.body.data.id }, body };
  },
};
