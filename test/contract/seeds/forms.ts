import { randomUUID } from 'node:crypto';
import type { Client } from '../../helpers/http.js';
import type { Seed } from '../seeds.js';

async function form(api: Client) {
  const res = await api.post('/v1/forms', { name: `Form ${randomUUID()}`, status: 'active', schema: [{ name: 'email', type: 'email', required: true }] });
  if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
  return res.body.data as { id: number; slug: string };
}

async function submission(api: Client, f: { slug: string }) {
  const key = (await api.get('/v1/site/info')).body.data.publicKey;
  const res = await api.post(`/v1/public/forms/${f.slug}/submissions`, { email: 'a@example.com' }, { 'x-site-key': key });
  if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
}

export const formSeeds: Record<string, Seed> = {
  '/v1/forms/:id': async (api, route) => {
    const f = await form(api);
    const body = route.url.endsWith('copy-to-locale') ? { locale: 'en' } : { name: 'Renamed' };
    return { params: { id: f.id }, body };
  },
  '/v1/forms/:id/submissions/:submissionId': async (api) => {
    const f = await form(api);
    await submission(api, f);
    const list = await api.get(`/v1/forms/${f.id}/submissions`);
    return { params: { id: f.id, submissionId: list.body.data[0].id }, body: { status: 'read' } };
  },
};
