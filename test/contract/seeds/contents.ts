import { randomUUID } from 'node:crypto';
import type { Seed } from '../seeds.js';

async function content(api: Parameters<Seed>[0]) {
  const res = await api.post('/v1/contents', { type: 'post', title: `Post ${randomUUID()}`, bodyMarkdown: 'Hello' });
  if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
  return res.body.data as { id: number; slug: string };
}

export const contentSeeds: Record<string, Seed> = {
  '/v1/contents/:id': async (api, route) => {
    const c = await content(api);
    const body = route.url.endsWith('copy-to-locale') ? { targetLocale: 'en' } : { title: `Renamed ${randomUUID()}` };
    return { params: { id: c.id }, body };
  },
  '/v1/contents/slug/:slug': async (api) => ({ params: { slug: (await content(api)).slug } }),
  '/v1/contents/:id/revisions/:revisionId': async (api) => {
    const c = await content(api);
    const revisions = await api.get(`/v1/contents/${c.id}/revisions`);
    return { params: { id: c.id, revisionId: revisions.body.data[0].id } };
  },
};
