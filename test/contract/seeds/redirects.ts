import type { Client } from '../../helpers/http.js';
import type { Seed } from '../seeds.js';

let n = 0;

async function createRedirect(api: Client): Promise<number> {
  n += 1;
  const res = await api.post('/v1/redirects', { sourcePath: `/contract-old-${n}`, targetUrl: `/contract-new-${n}` });
  if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

/** A 404 log entry: a resolve of a path no rule matches, then its id from the log. */
async function createMiss(api: Client): Promise<number> {
  n += 1;
  const path = `/contract-missing-${n}`;
  const miss = await api.get(`/v1/redirects/resolve?path=${encodeURIComponent(path)}`);
  if (miss.status !== 404) throw new Error(`seed failed: ${JSON.stringify(miss.body)}`);
  const log = await api.get('/v1/redirects/not-found?limit=100');
  const entry = log.body.data.find((e: { path: string }) => e.path === path);
  if (!entry) throw new Error(`seed failed: ${JSON.stringify(log.body)}`);
  return entry.id;
}

export const redirectSeeds: Record<string, Seed> = {
  '/v1/redirects/:id': async (api) => ({ params: { id: await createRedirect(api) }, body: { note: 'Changed' } }),
  '/v1/redirects/not-found/:id': async (api) => ({ params: { id: await createMiss(api) }, body: { targetUrl: '/somewhere' } }),
};
