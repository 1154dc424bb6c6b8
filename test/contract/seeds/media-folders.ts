import { randomUUID } from 'node:crypto';
import type { Seed } from '../seeds.js';

export const mediaFolderSeeds: Record<string, Seed> = {
  '/v1/media-folders/:id': async (api, route) => {
    const res = await api.post('/v1/media-folders', { name: `Folder ${randomUUID()}` });
    if (res.status !== 201) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    const body = route.url.endsWith('/move') ? { parentId: null } : { name: `Renamed ${randomUUID()}` };
    return { params: { id: res.body.data.id }, body };
  },
};
