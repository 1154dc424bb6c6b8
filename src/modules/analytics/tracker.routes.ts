import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { etagOf, sendCacheable } from '../../shared/http-cache.js';
import type { App } from '../types.js';

const JAVASCRIPT = 'application/javascript; charset=utf-8';
/** A day: the URL carries no version, so a new tracker reaches every browser within a day (design analytics.md 1.1). */
const MAX_AGE = 86_400;

interface Representation {
  body: Buffer;
  etag: string;
}

/**
 * A committed build output (`npm run build:tracker`) with its gzip twin made once at start-up.
 * The path is resolved from the package root, which is three levels up both from src/ (tsx) and
 * from dist/ (tsc copies no .js assets).
 */
function load(file: 'script.js' | 'cwv.js'): { identity: Representation; gzip: Representation } {
  const body = readFileSync(new URL(`../../../src/modules/analytics/public/${file}`, import.meta.url));
  const gzip = gzipSync(body, { level: 9 });
  return { identity: { body, etag: etagOf(body) }, gzip: { body: gzip, etag: etagOf(gzip) } };
}

/** Whether `Accept-Encoding` takes gzip (`gzip` or `*`, with a weight above 0). */
export function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
    return (coding === 'gzip' || coding === '*') && (!q || Number(q[1]) > 0);
  });
}

const docs = {
  'script.js':
    'The analytics tracker (decision A3): pageviews (SPA and hash routing, bfcache), engaged time and scroll depth, clicks with rage and dead clicks, outbound links, downloads, form start and submit, goals (`cairn("goal", name)`), an opt-in consent gate; no cookie, no storage. Paste a `script` element with `defer`, `src=".../v1/public/analytics/script.js"` and `data-site-key="pk_..."` (the `snippet` of the analytics settings); attributes `data-api`, `data-hash`, `data-cwv`, `data-clicks="off"`, `data-require-consent`.',
  'cwv.js': 'The Core Web Vitals add-on (web-vitals: LCP, INP, CLS, FCP, TTFB, and FID), loaded by the tracker after `load` when its tag has `data-cwv`.',
};

/**
 * `GET /v1/public/analytics/script.js` and `cwv.js` (design analytics.md 1.1): the same static
 * files for every site, so no site key; any page may load them (`Access-Control-Allow-Origin: *`,
 * `Cross-Origin-Resource-Policy: cross-origin` for pages that isolate themselves). Strong ETag
 * per encoding, `Cache-Control: public, max-age=86400`, 304; gzip when the client takes it.
 */
export function trackerRoutes(app: App): void {
  for (const file of ['script.js', 'cwv.js'] as const) {
    const served = load(file);
    app.get(
      `/public/analytics/${file}`,
      {
        config: { scope: 'public' },
        schema: {
          tags: ['Analytics'],
          operationId: file === 'script.js' ? 'getAnalyticsScript' : 'getAnalyticsCwvScript',
          summary: file === 'script.js' ? 'The analytics tracker script' : 'The Core Web Vitals add-on script',
          description: `${docs[file]} No site key. \`ETag\` (one per encoding), \`Cache-Control: public, max-age=${MAX_AGE}\`, 304 on \`If-None-Match\`; gzip when \`Accept-Encoding\` takes it.`,
          response: { 200: { description: 'application/javascript', type: 'string' }, 304: { description: 'Not modified', type: 'null' } },
        },
      },
      async (req: FastifyRequest, reply: FastifyReply) => {
        const gzip = acceptsGzip(req.headers['accept-encoding']);
        reply.header('vary', 'Accept-Encoding').header('access-control-allow-origin', '*').header('cross-origin-resource-policy', 'cross-origin');
        reply.header('x-content-type-options', 'nosniff');
        if (gzip) reply.header('content-encoding', 'gzip');
        return sendCacheable(req, reply, gzip ? served.gzip : served.identity, JAVASCRIPT, MAX_AGE);
      },
    );
  }
}
