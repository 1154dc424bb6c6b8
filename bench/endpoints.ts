import type { Db } from '../src/db/types.js';
import { seedBlog } from './seed-blog.js';
import { seedRedirects } from './seed-redirects.js';
import { seedSeo } from './seed-seo.js';
import { seedSiteBlocks } from './seed-site-blocks.js';
import { seedForms } from './seed-forms.js';
import { seedCookieConsent } from './seed-cookie-consent.js';
import { seedMedia } from './seed-media.js';

/**
 * What the seeding step knows, handed to every `path`, `body` and `headers` function. The base
 * fields exist from the start; each seeder adds its own keys (e.g. `postId`, `postSlug`).
 */
export interface BenchContext {
  siteId: string;
  siteSlug: string;
  /** The site owner: the user the bench token belongs to. */
  userId: string;
  /** A management token holding every scope (sent as `Authorization: Bearer ...`). */
  token: string;
  /** The site's public key, for public endpoints that take one. */
  publicKey: string;
  [key: string]: unknown;
}

/**
 * Adds realistic data for an endpoint before the server starts (e.g. 10,000 posts), and returns
 * the ids/slugs its path needs; they are merged into the context, but for `summary` (a string:
 * what was written, printed next to the seeding time). It runs on the bench process's
 * own connection to the database file, with the app's services importable from src/. The fourth
 * argument is the context so far, for seeders that build on an earlier one's rows.
 */
export type Seeder = (db: Db, siteId: string, userId: string, ctx: Readonly<BenchContext>) => Promise<Record<string, unknown> | undefined>;

export type OrFn<T> = T | ((ctx: BenchContext) => T);

/** A value, or the function of the seeded context that gives it. */
export function resolve<T>(value: OrFn<T>, ctx: BenchContext): T {
  return typeof value === 'function' ? (value as (c: BenchContext) => T)(ctx) : value;
}

/**
 * What an issue asks of an endpoint; the bench prints whether each run met it (a missed target is
 * reported, it does not change the exit code: on a shared machine a noisy run can miss it).
 */
export interface BenchTargets {
  /** Latency p99 at most this, ms. */
  p99Ms?: number;
  /** Per baseline id: req/s at least this share of the baseline's (e.g. `{ bareFastify: 0.8 }`). */
  minRatio?: Record<string, number>;
}

export interface BenchEndpoint {
  /** Row label; unique. */
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path on the Cairn server, with its query string. */
  path: OrFn<string>;
  /** JSON body (serialized once before the run; every request sends the same bytes). */
  body?: OrFn<unknown>;
  /** Extra request headers. */
  headers?: OrFn<Record<string, string>>;
  /** Send the bench token (default true). Public endpoints set false. */
  auth?: boolean;
  /**
   * Every `[<id>]` in the body becomes a unique id on each request (autocannon's idReplacement),
   * e.g. a title, so that repeated creates do not all collide on one slug.
   */
  uniqueIds?: boolean;
  /**
   * Ids of the per-endpoint baselines (bench/baselines.ts) that serve this same request, at the
   * same path and with the same JSON; each is measured right after the endpoint. Other baselines
   * show a dash in this endpoint's row.
   */
  baselines?: readonly string[];
  /**
   * The path the per-endpoint baselines are sent, when it is not `path`: for rows compared with
   * a reference job rather than the same one (a regex resolve against one indexed lookup).
   */
  baselinePath?: OrFn<string>;
  /**
   * The same request on the lean reference server (bench/lean-server.mjs, its own schema and SQL,
   * the same answers' shapes), when it serves one.
   */
  leanPath?: OrFn<string>;
  /**
   * False when a baseline does a reference job, not the same one (so its answer and SQL differ
   * by design): bench/parity.ts skips the row. Default true.
   */
  parity?: boolean;
  /** The status of a correct answer when it is not a 2xx (a miss of a redirect resolve is a 404). */
  expectStatus?: number;
  targets?: BenchTargets;
  /**
   * Seeds this endpoint's data. Several endpoints may name the same function (e.g. list posts
   * and get one post): each distinct function runs once, in the order endpoints list them.
   */
  seed?: Seeder;
}

/**
 * The measured endpoints, in table order. A module adds its hot endpoints here, with a seeder
 * when it needs data to be realistic. Requests are repeated for the whole duration, so a write
 * endpoint must be repeatable (an idempotent PUT, or a POST whose duplicates are acceptable).
 */
export const ENDPOINTS: BenchEndpoint[] = [
  // No token and one `select 1`: the framework's own floor for this service.
  { name: 'GET /health', method: 'GET', path: '/health', auth: false },
  // The smallest authenticated read (issue 37): what the pipeline (auth, rate limit, hooks, serialisation) costs.
  { name: 'GET /v1/site/info', method: 'GET', path: '/v1/site/info' },
  { name: 'GET /v1/sites', method: 'GET', path: '/v1/sites' },
  { name: 'GET /v1/site/settings', method: 'GET', path: '/v1/site/settings' },
  { name: 'GET /v1/site/settings/language', method: 'GET', path: '/v1/site/settings/language' },
  { name: 'GET /v1/settings/notifications', method: 'GET', path: '/v1/settings/notifications' },
  { name: 'PUT /v1/site/settings', method: 'PUT', path: '/v1/site/settings', body: { description: 'bench' } },

  // A realistic blog (bench/seed-blog.ts): 200 categories in a 3-level tree, 500 tags, 10,000 posts
  // of about 5 KB. Reads are compared with a bare Fastify + SQLite server running the same SQL
  // (bench/bare-fastify.mjs); the targets are those of the categories/tags and contents issues.
  ...blogReads(),
  ...redirectResolves(),
  ...seoOutputs(),
  ...siteBlockReads(),
  // A stored image variant at its public URL (issue 10), against @fastify/static sending the same file.
  {
    name: 'GET /files/...?w=400 (stored variant)',
    method: 'GET',
    path: (ctx) => String(ctx.mediaPath),
    auth: false,
    seed: seedMedia,
    baselines: ['bareFastify'],
    parity: false,
    targets: { minRatio: { bareFastify: 0.8 } },
  },
  // A visitor's form submission (issue 11): stored, counted, its webhook event and e-mail job
  // written in one transaction; the bare server does the same writes.
  {
    name: 'POST /v1/public/forms/:slug/submissions',
    method: 'POST',
    path: '/v1/public/forms/contact/submissions',
    auth: false,
    headers: (ctx) => ({ 'x-site-key': String(ctx.publicKey), 'content-type': 'application/json' }),
    seed: seedForms,
    uniqueIds: true,
    body: { name: 'Ada Lovelace', email: 'ada@example.com', topic: 'sales', message: 'Hello, I would like to know more about [<id>].', _gotcha: '' },
    baselines: ['bareFastify'],
    targets: { minRatio: { bareFastify: 0.8 } },
  },
  // The cookie banner's public side (issue 33): the config every page view of a site reads
  // (answered from the delivery cache, with its ETag; and revalidated, 304), and a visitor's
  // choice stored with its daily counts in one transaction.
  {
    name: 'GET /v1/public/cookie-consent/config',
    method: 'GET',
    path: '/v1/public/cookie-consent/config?locale=en',
    auth: false,
    headers: (ctx) => ({ 'x-site-key': String(ctx.publicKey) }),
    seed: seedCookieConsent,
  },
  {
    name: 'GET /v1/public/cookie-consent/config (If-None-Match, 304)',
    method: 'GET',
    path: '/v1/public/cookie-consent/config?locale=en',
    auth: false,
    headers: (ctx) => ({ 'x-site-key': String(ctx.publicKey), 'if-none-match': String(ctx.consentConfigEtag) }),
    seed: seedCookieConsent,
    expectStatus: 304,
  },
  {
    name: 'POST /v1/public/cookie-consent/consents',
    method: 'POST',
    path: '/v1/public/cookie-consent/consents',
    auth: false,
    headers: (ctx) => ({ 'x-site-key': String(ctx.publicKey), 'content-type': 'application/json' }),
    seed: seedCookieConsent,
    body: {
      consentId: '6f1c2a9e-8b7d-4c3e-9f10-2a3b4c5d6e7f',
      categories: ['necessary', 'analytics'],
      services: { analytics: ['matomo'] },
      revision: 2,
      locale: 'en',
      pageUrl: 'https://bench.test/pricing?utm_source=news',
    },
  },
  // Last: every request inserts a post (its row, revision and full-text index entries), so the
  // hundreds or thousands of posts a run adds do not change the reads above. A fresh title each
  // time: each request makes a new slug instead of probing the -2, -3, ... suffixes of one title.
  {
    name: 'POST /v1/contents',
    method: 'POST',
    path: '/v1/contents',
    seed: seedBlog,
    uniqueIds: true,
    body: (ctx: BenchContext) => ({ type: 'post', title: 'Bench post [<id>]', bodyMarkdown: String(ctx.createMarkdown) }),
    leanPath: '/lean/contents',
    // Issue 37: a create >= 0.6x the lean server.
    targets: { minRatio: { lean: 0.6 } },
  },
];

function blogReads(): BenchEndpoint[] {
  const vsBare = { minRatio: { bareFastify: 0.8 } };
  const read = (name: string, path: OrFn<string>, targets: BenchTargets = vsBare, leanPath?: OrFn<string>): BenchEndpoint => ({
    name,
    method: 'GET',
    path,
    seed: seedBlog,
    baselines: ['bareFastify'],
    targets,
    ...(leanPath ? { leanPath } : {}),
  });
  // The lean server's path for a contents path: the same request under /lean.
  const lean = (path: OrFn<string>) => (ctx: BenchContext) => `/lean${resolve(path, ctx).slice('/v1'.length)}`;
  // Issue 37: a list page (and a read by id) >= 0.8x the lean server.
  const listTargets = { minRatio: { ...vsBare.minRatio, lean: 0.8 }, p99Ms: 25 };
  // Issue 15: get by id >= 0.8x the lean server, search >= 0.5x and p99 <= 50 ms.
  const searchTargets = { minRatio: { ...vsBare.minRatio, lean: 0.5 }, p99Ms: 50 };
  const contentRead = (name: string, path: OrFn<string>, targets: BenchTargets) => read(name, path, targets, lean(path));
  const deliveryRead = (name: string, path: OrFn<string>): BenchEndpoint => ({
    ...read(name, path, { minRatio: { bareNodeHttp: 0.5 } }, lean(path)),
    auth: false,
    headers: (ctx) => ({ authorization: `Bearer ${String(ctx.contentsDeliveryToken)}` }),
    // The same-SQL server answers every request from the database: the same-job reference is
    // bare node:http sending the same bytes from memory (bench/bare-bytes.mjs).
    baselines: ['bareBytes'],
  });
  return [
    read('GET /v1/categories/tree', '/v1/categories/tree'),
    read('GET /v1/tags?limit=100', '/v1/tags?limit=100'),
    contentRead('GET /v1/contents (page 1)', '/v1/contents', listTargets),
    contentRead('GET /v1/contents?page=300', '/v1/contents?page=300', listTargets),
    contentRead('GET /v1/contents/:id', (ctx) => `/v1/contents/${String(ctx.postId)}`, { minRatio: { ...vsBare.minRatio, lean: 0.8 } }),
    contentRead('GET /v1/contents/slug/:slug', (ctx) => `/v1/contents/slug/${encodeURIComponent(String(ctx.postSlug))}`, vsBare),
    // A word in about a third of the posts, then one in about 1% (their counts are printed after seeding).
    contentRead('GET /v1/contents/search (common word)', (ctx) => `/v1/contents/search?q=${encodeURIComponent(String(ctx.searchCommon))}`, searchTargets),
    contentRead('GET /v1/contents/search (rare word)', (ctx) => `/v1/contents/search?q=${encodeURIComponent(String(ctx.searchRare))}`, searchTargets),
    // Issue 15 item 6: a front end's repeated reads, answered by the delivery cache, >= 0.5x bare node:http.
    deliveryRead('GET /v1/contents/:id (delivery token, cached)', (ctx) => `/v1/contents/${String(ctx.postId)}`),
    deliveryRead('GET /v1/contents (delivery token, cached)', '/v1/contents'),
    deliveryRead('GET /v1/contents/search (delivery token, cached)', (ctx) => `/v1/contents/search?q=${encodeURIComponent(String(ctx.searchCommon))}`),
  ];
}

/**
 * Resolving a path, as a site's front end does for every request it cannot route, with 10,000
 * exact and 500 regex redirects (bench/seed-redirects.ts). The reference is a bare Fastify +
 * SQLite server doing one indexed lookup of the path (decisions R5): the regex row is compared
 * with that lookup finding an exact path, the miss row with it finding nothing.
 */
function redirectResolves(): BenchEndpoint[] {
  const targets = { minRatio: { bareFastify: 0.8 }, p99Ms: 5 };
  const resolvePath = (key: string) => (ctx: BenchContext) => `/v1/redirects/resolve?path=${encodeURIComponent(String(ctx[key]))}`;
  const row = (name: string, key: string, extra: Partial<BenchEndpoint>): BenchEndpoint => ({
    name,
    method: 'GET',
    path: resolvePath(key),
    seed: seedRedirects,
    baselines: ['bareFastify'],
    parity: false,
    targets,
    ...extra,
  });
  return [
    row('GET /v1/redirects/resolve (exact)', 'redirectExactPath', {}),
    row('GET /v1/redirects/resolve (regex)', 'redirectRegexPath', { baselinePath: resolvePath('redirectExactPath'), targets: { p99Ms: 5 } }),
    row('GET /v1/redirects/resolve (miss, 404)', 'redirectMissPath', { expectStatus: 404 }),
  ];
}

/**
 * What crawlers read (issue 13): sitemap.xml and llms.txt of a site with 30,000 published
 * contents in three locales (bench/seed-seo.ts), served from the output cache, against a bare
 * Fastify server sending the same pre-built bytes. The cold build times are printed by the seeder.
 */
function seoOutputs(): BenchEndpoint[] {
  const row = (name: string, file: string): BenchEndpoint => ({
    name,
    method: 'GET',
    path: `/v1/public/${file}`,
    auth: false,
    headers: (ctx) => ({ 'x-site-key': String(ctx.seoPublicKey) }),
    seed: seedSeo,
    baselines: ['bareFastify'],
    parity: false,
    targets: { minRatio: { bareFastify: 0.8 } },
  });
  return [row('GET /v1/public/sitemap.xml (cached, 30,000 URLs)', 'sitemap.xml'), row('GET /v1/public/llms.txt (cached)', 'llms.txt')];
}

/**
 * What a front end reads on every page view (issue 14): the published page block of `/` with
 * three dataSource fields of 10 contents each (bench/seed-site-blocks.ts), read by a delivery
 * token, against a bare Fastify + SQLite server running the same queries.
 */
function siteBlockReads(): BenchEndpoint[] {
  return [
    {
      name: 'GET /v1/site-blocks/by-path (3 data sources)',
      method: 'GET',
      path: '/v1/site-blocks/by-path?path=/',
      auth: false,
      headers: (ctx) => ({ authorization: `Bearer ${String(ctx.deliveryToken)}` }),
      seed: seedSiteBlocks,
      baselines: ['bareFastify'],
      targets: { minRatio: { bareFastify: 0.8 }, p99Ms: 25 },
    },
  ];
}
