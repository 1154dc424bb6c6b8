import type { Db } from '../src/db/types.js';

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
 * the ids/slugs its path needs; they are merged into the context. It runs on the bench process's
 * own connection to the database file, with the app's services importable from src/. The fourth
 * argument is the context so far, for seeders that build on an earlier one's rows.
 */
export type Seeder = (db: Db, siteId: string, userId: string, ctx: Readonly<BenchContext>) => Promise<Record<string, unknown> | void>;

type OrFn<T> = T | ((ctx: BenchContext) => T);

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
  { name: 'GET /v1/sites', method: 'GET', path: '/v1/sites' },
  { name: 'GET /v1/site/settings', method: 'GET', path: '/v1/site/settings' },
  { name: 'GET /v1/site/settings/language', method: 'GET', path: '/v1/site/settings/language' },
  { name: 'GET /v1/settings/notifications', method: 'GET', path: '/v1/settings/notifications' },
  { name: 'PUT /v1/site/settings', method: 'PUT', path: '/v1/site/settings', body: { description: 'bench' } },
];
