/**
 * Redirects for the resolve rows of `npm run bench`: 10,000 exact rules (`/old/post-<n>` to
 * `/posts/<n>`) and 500 regex ones (`^/legacy-<n>/(.*)$` to `/archive/<n>/$1`), imported through
 * the service's own import (so each is checked as a user's would be). The regex path the bench
 * resolves matches rule 250 of 500, so the RE2 set is searched past half its patterns; the
 * miss path matches none.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../src/db/types.js';
import { RedirectCache } from '../src/modules/redirects/redirects.cache.js';
import { HitRecorder } from '../src/modules/redirects/redirects.hits.js';
import { importRedirects } from '../src/modules/redirects/redirects.service.js';
import type { BenchContext } from './endpoints.js';

export const REDIRECTS = { exact: 10_000, regex: 500 };

export async function seedRedirects(db: Db, siteId: string, _userId: string, _ctx: Readonly<BenchContext>): Promise<Record<string, unknown>> {
  const log = { warn: () => undefined } as unknown as FastifyBaseLogger;
  const ctx = { db, cache: new RedirectCache(db), hits: new HitRecorder(db, log) };
  const exact = Array.from({ length: REDIRECTS.exact }, (_, i) => ({ row: i + 1, input: { sourcePath: `/old/post-${i}`, targetUrl: `/posts/${i}` } }));
  const regex = Array.from({ length: REDIRECTS.regex }, (_, i) => ({
    row: i + 1,
    input: { sourcePath: `^/legacy-${i}/(.*)$`, targetUrl: `/archive/${i}/$1`, isRegex: true, statusCode: 302 },
  }));
  const a = await importRedirects(ctx, siteId, exact);
  const b = await importRedirects(ctx, siteId, regex);
  if (a.imported !== REDIRECTS.exact || b.imported !== REDIRECTS.regex) throw new Error(`redirect seeding failed: ${JSON.stringify({ a, b })}`);
  return {
    redirectExactPath: `/old/post-${REDIRECTS.exact / 2}`,
    redirectRegexPath: `/legacy-${REDIRECTS.regex / 2}/2019/05/a-post?utm_source=x`,
    redirectMissPath: '/no/such/page',
    summary: `${REDIRECTS.exact} exact and ${REDIRECTS.regex} regex redirects`,
  };
}
