import { randomUUID } from 'node:crypto';
import type { Seed } from '../seeds.js';

export const tagSeeds: Record<string, Seed> = {
  '/v1/tags/:id': async (api, route) => {
    const res = await api.post('/v1/tags', { name: `Tag ${randomUUID()}` });
    if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    const body = route.url.endsWith('copy-to-locale') ? { targetLocale: 'en' } : { name: `Renamed ${randomUUID()}` };
    return { params: { id: res.body.data.id }, body };
  },
};
