import type { Client } from '../../helpers/http.js';
import type { Seed } from '../seeds.js';

async function created(api: Client, path: string, body: unknown): Promise<string> {
  const res = await api.post(path, body);
  if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

/** Users, roles and tokens of site B; each body is valid, so A's 404 is about tenancy. */
export const userSeeds: Record<string, Seed> = {
  '/v1/users/:id': async (api) => ({ params: { id: await created(api, '/v1/users', { fullName: 'Seeded user' }) }, body: { fullName: 'Renamed' } }),
  '/v1/roles/:id': async (api) => ({
    params: { id: await created(api, '/v1/roles', { name: `Role ${Math.random().toString(36).slice(2, 8)}`, scopes: ['tags.view'] }) },
    body: { name: `Renamed ${Math.random().toString(36).slice(2, 8)}` },
  }),
  '/v1/api-tokens/:id': async (api) => ({
    params: { id: await created(api, '/v1/api-tokens', { name: 'Seeded token', scopes: ['tags.view'] }) },
    body: { name: 'Renamed' },
  }),
};
