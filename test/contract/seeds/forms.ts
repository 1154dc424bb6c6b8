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

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

/** A form with a file field and one submission carrying a file, sent as multipart. */
async function fileSubmission(api: Client) {
  const res = await api.post('/v1/forms', { name: `Files ${randomUUID()}`, status: 'active', schema: [{ name: 'photo', type: 'file', required: true }] });
  const f = res.body.data as { id: number; slug: string };
  const key = (await api.get('/v1/site/info')).body.data.publicKey;
  const boundary = 'contractboundary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="p.png"\r\nContent-Type: image/png\r\n\r\n`),
    PNG,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const sent = await api.call('POST', `/v1/public/forms/${f.slug}/submissions?siteKey=${key}`, body, {
    'content-type': `multipart/form-data; boundary=${boundary}`,
  });
  if (sent.status !== 201) throw new Error(`seed failed: ${JSON.stringify(sent.body)}`);
  const [s] = (await api.get(`/v1/forms/${f.id}/submissions`)).body.data;
  return { id: f.id, submissionId: s.id, fileId: s.data.photo.fileId };
}

export const formSeeds: Record<string, Seed> = {
  '/v1/forms/:id/submissions/:submissionId/files/:fileId': async (api) => ({ params: await fileSubmission(api) }),
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
