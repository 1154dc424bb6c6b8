import type { Seed } from '../seeds.js';

export const analyticsSeeds: Record<string, Seed> = {
  // A session of the seeding site, made through the import and found through the sessions list.
  '/v1/analytics/sessions/:sessionId': async (api) => {
    const imported = await api.post('/v1/analytics/import', {
      events: [{ timestamp: new Date(Date.now() - 60_000).toISOString(), visitorId: 'seed', path: '/' }],
    });
    if (imported.status !== 201) throw new Error(`seed failed: ${JSON.stringify(imported.body)}`);
    const list = await api.get('/v1/analytics/sessions?period=7d');
    if (list.status !== 200 || !list.body.data.length) throw new Error(`seed failed: ${JSON.stringify(list.body)}`);
    return { params: { sessionId: list.body.data[0].id } };
  },
};
