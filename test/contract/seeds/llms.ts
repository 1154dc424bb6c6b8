import type { Client } from '../../helpers/http.js';
import type { Seed } from '../seeds.js';

let n = 0;

export const llmsSeeds: Record<string, Seed> = {
  '/v1/markdown/content/:slug': async (api: Client) => {
    n += 1;
    await api.put('/v1/seo/settings', { llmsTxtEnabled: true });
    const res = await api.post('/v1/contents', { type: 'post', title: 'Contract', slug: `contract-md-${n}`, status: 'published', bodyMarkdown: 'Text.' });
    if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    return { params: { slug: `contract-md-${n}` } };
  },
  '/v1/markdown/pages/:slug': async (api: Client) => {
    n += 1;
    await api.put('/v1/seo/settings', { llmsTxtEnabled: true });
    const slug = `contract-page-${n}`;
    const res = await api.post('/v1/site-blocks', { name: 'Contract page', slug, type: 'page', path: `/${slug}` });
    if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    await api.post(`/v1/site-blocks/${slug}/publish`);
    return { params: { slug } };
  },
};
