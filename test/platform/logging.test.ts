import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken } from '../helpers/app.js';

describe('request logs (issue 16 item 12)', () => {
  it('never write a token passed in the URL', async () => {
    let written = '';
    const stream = new Writable({
      write(chunk, _enc, done) {
        written += String(chunk);
        done();
      },
    });
    const ctx = await buildTestApp({}, { logger: { level: 'info', stream } });
    try {
      const { token } = await createSiteWithToken(ctx.app);
      for (const name of ['access_token', 'token', 'api_key', 'ACCESS_TOKEN']) {
        await ctx.app.inject({ method: 'GET', url: `/v1/sites?limit=5&${name}=${token}` });
        await ctx.app.inject({ method: 'GET', url: `/v1/no-such-route?${name}=${encodeURIComponent(token)}` });
      }
      await ctx.app.inject({ method: 'GET', url: '/v1/sites', headers: { authorization: `Bearer ${token}` } });
      expect(written).toContain('incoming request');
      expect(written).toContain('access_token=[redacted]');
      expect(written).toContain('limit=5');
      expect(written).not.toContain(token);
      expect(written).not.toContain(token.slice(-43));
    } finally {
      await ctx.close();
    }
  });
});
