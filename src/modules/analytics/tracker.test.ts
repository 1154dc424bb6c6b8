import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildTracker, TRACKER_OUTPUT_DIR } from '../../../scripts/build-tracker.mjs';
import { useTestApp } from '../../../test/helpers/suite.js';
import { acceptsGzip } from './tracker.routes.js';

const committed = (file: string) => readFileSync(`${TRACKER_OUTPUT_DIR}${file}`, 'utf8');

describe('the tracker build', () => {
  it('committed script.js and cwv.js are exactly what the sources build to now (run npm run build:tracker)', async () => {
    const fresh = await buildTracker();
    expect(committed('script.js')).toBe(fresh['script.js']);
    expect(committed('cwv.js')).toBe(fresh['cwv.js']);
  }, 30_000);

  it('stays within its budgets: script.js at most 3,072 bytes gzip, cwv.js at most 4,096', () => {
    const script = gzipSync(committed('script.js'), { level: 9 }).length;
    const cwv = gzipSync(committed('cwv.js'), { level: 9 }).length;
    expect(script).toBeLessThanOrEqual(3072);
    expect(cwv).toBeLessThanOrEqual(4096);
    // A build that lost its content would pass the budgets: both are real bundles.
    expect(script).toBeGreaterThan(2000);
    expect(cwv).toBeGreaterThan(3000);
  });

  it('is ES2017 without a module wrapper: no import, export or optional chaining left', () => {
    for (const file of ['script.js', 'cwv.js']) {
      const text = committed(file);
      expect(text).not.toMatch(/\bimport\s*[{(*"']|\bexport\s*[{*]|\?\.[A-Za-z_$(]/);
      expect(() => new Function(text)).not.toThrow();
    }
  });
});

describe('GET /v1/public/analytics/script.js and cwv.js', () => {
  const ctx = useTestApp();

  for (const file of ['script.js', 'cwv.js']) {
    it(`${file}: served without a site key as JavaScript, with a strong ETag, a day's caching and any origin allowed`, async () => {
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/public/analytics/${file}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8');
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.body).toBe(committed(file));
      expect(res.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      expect(res.headers['cache-control']).toBe('public, max-age=86400');
      expect(res.headers.vary).toBe('Accept-Encoding');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
      expect(res.headers['x-content-type-options']).toBe('nosniff');

      const again = await ctx.app.inject({ method: 'GET', url: `/v1/public/analytics/${file}`, headers: { 'if-none-match': res.headers.etag as string } });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(res.headers.etag);
      const stale = await ctx.app.inject({ method: 'GET', url: `/v1/public/analytics/${file}`, headers: { 'if-none-match': '"not-this-one"' } });
      expect(stale.statusCode).toBe(200);
    });

    it(`${file}: gzip when the client takes it, with its own ETag and 304`, async () => {
      const plain = await ctx.app.inject({ method: 'GET', url: `/v1/public/analytics/${file}` });
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/public/analytics/${file}`, headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(res.rawPayload).toString('utf8')).toBe(committed(file));
      expect(res.rawPayload.length).toBe(gzipSync(committed(file), { level: 9 }).length);
      expect(res.headers.etag).not.toBe(plain.headers.etag);
      const again = await ctx.app.inject({
        method: 'GET',
        url: `/v1/public/analytics/${file}`,
        headers: { 'accept-encoding': 'gzip', 'if-none-match': res.headers.etag as string },
      });
      expect(again.statusCode).toBe(304);
      // The plain version's ETag does not validate the gzip one.
      const other = await ctx.app.inject({
        method: 'GET',
        url: `/v1/public/analytics/${file}`,
        headers: { 'accept-encoding': 'gzip', 'if-none-match': plain.headers.etag as string },
      });
      expect(other.statusCode).toBe(200);
    });
  }

  it('reads Accept-Encoding by its weights', () => {
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('br, GZIP;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip; q=0.0, identity')).toBe(false);
    expect(acceptsGzip('br, deflate')).toBe(false);
    expect(acceptsGzip('x-gzip')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('')).toBe(false);
  });

  it('publishes both routes in the OpenAPI document as public', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/v1/public/analytics/script.js'].get.operationId).toBe('getAnalyticsScript');
    expect(doc.paths['/v1/public/analytics/cwv.js'].get.operationId).toBe('getAnalyticsCwvScript');
    // Public: an explicitly empty requirement, no credential (decisions TCL3; an absent one fails Redocly's lint and the client generator).
    expect(doc.paths['/v1/public/analytics/script.js'].get.security).toEqual([]);
    expect(doc.paths['/v1/public/analytics/cwv.js'].get.security).toEqual([]);
  });
});
