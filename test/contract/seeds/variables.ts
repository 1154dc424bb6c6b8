import { randomUUID } from 'node:crypto';
import type { Seed } from '../seeds.js';

export const variableSeeds: Record<string, Seed> = {
  '/v1/variables/:id': async (api, route) => {
    const res = await api.post('/v1/variables', { key: `seed_${randomUUID().replace(/-/g, '')}`, label: 'Seed', value: 'seeded' });
    if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    const body = route.url.endsWith('copy-to-locale') ? { targetLocale: 'en' } : { label: `Renamed ${randomUUID()}` };
    return { params: { id: res.body.data.id }, body };
  },
};
