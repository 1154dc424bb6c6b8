import { randomUUID } from 'node:crypto';
import type { Client } from '../../helpers/http.js';
import type { Seed } from '../seeds.js';

async function block(api: Client) {
  const res = await api.post('/v1/site-blocks', { name: `Block ${randomUUID()}`, type: 'global', schema: [{ name: 'title', type: 'string' }] });
  if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
  return res.body.data as { slug: string };
}

export const siteBlockSeeds: Record<string, Seed> = {
  '/v1/site-blocks/:slug': async (api, route) => {
    const { slug } = await block(api);
    const body = route.url.endsWith('/schema')
      ? { schema: [{ name: 'title', type: 'string' }] }
      : route.url.endsWith('/data')
        ? { data: { title: 'x' } }
        : route.url.endsWith('copy-to-locale')
          ? { locale: 'en' }
          : { name: 'Renamed' };
    return { params: { slug }, body };
  },
  '/v1/site-blocks/:slug/revisions/:revisionId/restore': async (api) => {
    const { slug } = await block(api);
    await api.put(`/v1/site-blocks/${slug}/data`, { data: { title: 'one' } });
    const revisions = await api.get(`/v1/site-blocks/${slug}/revisions`);
    return { params: { slug, revisionId: revisions.body.data[0].id } };
  },
};
