import { resolve, type BenchContext, type BenchEndpoint } from './endpoints.js';

/**
 * A reference server the endpoints are compared with. Each runs in its own child process
 * (`node <script>`), started with PORT, HOST, DATABASE_URL (the seeded database) and
 * CAIRN_DATA_DIR in its environment, and gets one "vs <label>" column in the table: the
 * endpoint's req/s divided by the baseline's.
 *
 * Two shapes:
 * - measured once (no `pathFor`): one fixed request at `path`, shown as its own row at the top;
 *   every endpoint is compared with that single run (bare node:http).
 * - measured per endpoint (`pathFor`): the baseline serves its own equivalent of each endpoint
 *   (e.g. a bare Fastify + SQLite server running the same query) and is measured right after
 *   that endpoint with the same load; `pathFor` returns null where it has no equivalent, and
 *   the cell shows a dash. Its runs are shown as `↳` rows under the endpoint's.
 */
export interface Baseline {
  /** Key in the JSON results. */
  id: string;
  /** Column header is `vs ${label}`; the once-measured row is named `${label}`. */
  label: string;
  /** Script path relative to the repository root, run with the same node binary. */
  script: string;
  /** Polled until it answers 2xx before measuring. */
  readyPath: string;
  /** How long it may take to answer there (default 30 s): a server that copies the seeded rows first needs longer. */
  readyTimeoutMs?: number;
  /** Measured-once baselines: the request path. */
  path?: string;
  /** Per-endpoint baselines: the equivalent path for this endpoint, or null. */
  pathFor?: (endpoint: BenchEndpoint, ctx: BenchContext) => string | null;
  /**
   * The script also exports `createBareApp(databaseFile)` (a Fastify app, not listening): the
   * bench then checks, before measuring, that it answers the same JSON and runs no statement
   * the service does not (bench/parity.ts).
   */
  parity?: boolean;
}

export const BASELINES: Baseline[] = [
  { id: 'bareNodeHttp', label: 'bare node:http', script: 'bench/bare-server.mjs', readyPath: '/', path: '/' },
  {
    // The same SQL and JSON as the service without its machinery (auth, validation, serializer
    // schemas, Kysely): the endpoints that list 'bareFastify' in their `baselines`.
    id: 'bareFastify',
    label: 'bare Fastify+SQLite',
    script: 'bench/bare-fastify.mjs',
    readyPath: '/bare/ready',
    pathFor: (endpoint, ctx) => (endpoint.baselines?.includes('bareFastify') ? resolve(endpoint.baselinePath ?? endpoint.path, ctx) : null),
    parity: true,
  },
  {
    // bare node:http answering the service's own bytes for the path from memory (bench/bare-bytes.mjs):
    // the floor of a cached read, beside the fixed small answer above. Endpoints list 'bareBytes'.
    id: 'bareBytes',
    label: 'bare node:http, same bytes',
    script: 'bench/bare-bytes.mjs',
    readyPath: '/ready',
    pathFor: (endpoint, ctx) => (endpoint.baselines?.includes('bareBytes') ? resolve(endpoint.path, ctx) : null),
  },
  {
    // A lean hand-written server with its own schema and one statement per answer
    // (bench/lean-server.mjs): the endpoints that give a `leanPath`.
    id: 'lean',
    label: 'lean server',
    script: 'bench/lean-server.mjs',
    readyPath: '/lean/ready',
    // It copies the seeded posts and indexes them for search first: a minute or more on a busy machine.
    readyTimeoutMs: 600_000,
    pathFor: (endpoint, ctx) => (endpoint.leanPath ? resolve(endpoint.leanPath, ctx) : null),
  },
];

/**
 * The baselines of a run on a database: on PostgreSQL the same-SQL server (SQLite only) is left
 * out and the lean server is its PostgreSQL twin (bench/lean-server-pg.mjs: its own schema in the
 * bench's database, node-postgres, its best SQL); bare node:http stays.
 */
export function baselinesFor(database: 'sqlite' | 'postgres'): Baseline[] {
  if (database === 'sqlite') return BASELINES;
  return BASELINES.filter((b) => b.id !== 'bareFastify').map((b) =>
    b.id === 'lean' ? { ...b, label: 'lean pg server', script: 'bench/lean-server-pg.mjs' } : b,
  );
}
