import type { Client } from '../../helpers/http.js';
import type { Seed } from '../seeds.js';

const PNG_1PX = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

async function media(api: Client): Promise<string> {
  const boundary = 'contractmedia';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="dot.png"\r\nContent-Type: image/png\r\n\r\n`),
    PNG_1PX,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await api.call('POST', '/v1/media/upload', body, { 'content-type': `multipart/form-data; boundary=${boundary}` });
  if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

export const mediaSeeds: Record<string, Seed> = {
  '/v1/media/:id': async (api) => ({ params: { id: await media(api) }, body: { alt: 'Renamed' } }),
  '/v1/media/:id/restore': async (api) => {
    const id = await media(api);
    await api.delete(`/v1/media/${id}`);
    return { params: { id } };
  },
};
