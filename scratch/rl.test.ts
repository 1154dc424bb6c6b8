import { it } from 'vitest';
import { buildTestApp, createSiteWithToken } from '../test/helpers/app.js';
import { client } from '../test/helpers/http.js';
it('x', async () => {
  const limited = await buildTestApp({ rateLimit: { max: 1_000_000, publicMax: 20, windowMs: 60_000 } });
  const s = await createSiteWithToken(limited.app);
  const api = client(limited.app, s.token);
  const key = (await api.get('/v1/site/info')).body.data.publicKey;
  const r = await limited.app.inject({ method: 'GET', url: '/v1/public/forms/contact', headers: { 'x-site-key': key }, remoteAddress: '192.0.2.9' });
  console.log(r.statusCode, r.headers, r.body);
  console.log(limited.config.rateLimit);
  await limited.close();
});
