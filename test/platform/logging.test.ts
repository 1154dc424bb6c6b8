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
      // Under any other name, percent-encoded, or as a path segment (issue 36 item 8).
      for (const url of [
        `/v1/sites?limit=5&auth=${token}`,
        `/v1/sites?q=${encodeURIComponent(token)}&page=1`,
        `/v1/sites?bearer=${token.replaceAll('_', '%5F')}`,
        `/v1/contents/slug/${token}`,
        `/v1/${token}/sites`,
        `/v1/redirects/resolve?path=${encodeURIComponent(`/a?t=${token}`)}`,
      ]) {
        await ctx.app.inject({ method: 'GET', url });
      }
      await ctx.app.inject({ method: 'GET', url: '/v1/sites', headers: { authorization: `Bearer ${token}` } });
      expect(written).toContain('incoming request');
      expect(written).toContain('access_token=[redacted]');
      expect(written).toContain('limit=5');
      expect(written).not.toContain(token);
      expect(written).not.toContain(token.slice(-43));
      expect(written).not.toContain(token.slice(-43).replaceAll('_', '%5F'));
      expect(written).toContain('/v1/contents/slug/[redacted]');
    } finally {
      await ctx.close();
    }
  });
});
