import { randomUUID } from 'node:crypto';
import type { Seed } from '../seeds.js';

export const singleTypeSeeds: Record<string, Seed> = {
  '/v1/single-types/:slug': async (api) => {
    const slug = `page-${randomUUID()}`;
    const res = await api.post('/v1/single-types', { slug, name: `Page ${slug}`, data: {} });
    if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    return { params: { slug }, body: { name: 'x' } };
  },
};
