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
  '/v1/sitemap/rules/:id': async (api: Client) => {
    const res = await api.post('/v1/sitemap/rules', { sourceType: 'content_type', sourceValue: 'post', priority: 0.7, changefreq: 'daily' });
    if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    return { params: { id: res.body.data.id }, body: { priority: 0.2 } };
  },
  '/v1/sitemap/sources/:id': async (api: Client) => {
    const res = await api.post('/v1/sitemap/sources', { name: 'Shop', url: 'https://shop.example.test/sitemap.xml' });
    if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    return { params: { id: res.body.data.id }, body: { isActive: false } };
  },
};
