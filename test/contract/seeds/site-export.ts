import type { Seed } from '../seeds.js';

/** An export job of site B (queued: the contract tests run no worker), so A's 404 is about tenancy. */
export const siteExportSeeds: Record<string, Seed> = {
  '/v1/site/export/:id': async (api) => {
    const res = await api.post('/v1/site/export', {});
    if (res.status !== 202) throw new Error(`seed failed: ${JSON.stringify(res.body)}`);
    return { params: { id: res.body.data.id } };
  },
};
