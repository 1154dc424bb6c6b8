import type { Client } from '../../helpers/http.js';
import type { Seed } from '../seeds.js';

let n = 0;

export const sitemapSeeds: Record<string, Seed> = {
  '/v1/sitemap/entries/:id': async (api: Client) => {
    n += 1;
    const res = await api.post('/v1/sitemap/entries', { url: `/contract-page-${n}` });
    if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    return { params: { id: res.body.id }, body: { title: 'Changed' } };
  },
};
