/**
 * Keeps a per-endpoint baseline honest: before anything is measured, the built service
 * (dist/app.js) and the bare Fastify + SQLite app (bench/bare-fastify.mjs) are loaded in this
 * process on the seeded database, each compared endpoint is requested once from both (Fastify's
 * inject, no network), and the SQL statements each runs are recorded (better-sqlite3's
 * Statement methods, wrapped for the duration of the check) along with the JSON answered.
 *
 * - The answers must be equal (object key order aside), else the baseline does different work.
 * - Every statement the baseline runs must also be run by the service, the same number of times
 *   (whitespace aside); a statement only the baseline runs means the service's SQL changed and
 *   bench/bare-fastify.mjs was not updated.
 * - Statements only the service runs are its own extra work (the token lookup on every request,
 *   the site for the default locale ...): listed in the report, not a problem.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { resolve, type BenchContext, type BenchEndpoint } from './endpoints.js';

export interface ParityResult {
  /** Null when equal, else where the answers first differ (or why they could not be compared). */
  answerMismatch: string | null;
  /** Statements of the baseline the service does not run (normalized SQL), one entry per run. */
  baselineOnly: string[];
  /** Statements of the service the baseline does not run. */
  serviceOnly: string[];
  /** How many statements each ran for the request. */
  serviceStatements: number;
  baselineStatements: number;
}

interface Injectable {
  inject(opts: { method: string; url: string; headers?: Record<string, string>; payload?: string }): Promise<{ statusCode: number; body: string }>;
  ready(): PromiseLike<unknown>;
  close(): PromiseLike<unknown>;
}

/** JSON with object keys sorted, so that two answers compare equal whatever their key order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** The first place two JSON values differ, as a path (`$.data[3].tags`), or null when equal. */
function firstDifference(a: unknown, b: unknown, at = '$'): string | null {
  if (JSON.stringify(a) === JSON.stringify(b)) return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${at} (${a.length} items vs ${b.length})`;
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i], b[i], `${at}[${i}]`);
      if (d) return d;
    }
  } else if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${at}.${k}`);
      if (d) return d;
    }
  }
  return `${at} (${JSON.stringify(a)?.slice(0, 80)} vs ${JSON.stringify(b)?.slice(0, 80)})`;
}

const normalize = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/** Multiset difference a - b. */
function minus(a: string[], b: string[]): string[] {
  const left = new Map<string, number>();
  for (const s of b) left.set(s, (left.get(s) ?? 0) + 1);
  const out: string[] = [];
  for (const s of a) {
    const n = left.get(s) ?? 0;
    if (n > 0) left.set(s, n - 1);
    else out.push(s);
  }
  return out;
}

/** A short label for a statement in the report: `select … from "api_tokens" where …`. */
export function statementLabel(sql: string): string {
  const m = /^(select|with)\b.*?\bfrom\s+(\S+)/i.exec(sql) ?? /^(update|insert into|delete from)\s+(\S+)/i.exec(sql);
  if (!m) return sql.length > 60 ? `${sql.slice(0, 57)}...` : sql;
  return /^(select|with)/i.test(m[1]!) ? `${m[1]!.toLowerCase()} … from ${m[2]} …` : `${m[1]!.toLowerCase()} ${m[2]} …`;
}

/**
 * Runs the check for every endpoint that lists `baselineId` in its `baselines`. Returns one
 * result per endpoint name; throws when the apps cannot be loaded (the caller reports it).
 */
export async function checkParity(opts: {
  root: string;
  databaseUrl: string;
  dataDir: string;
  ctx: BenchContext;
  endpoints: readonly BenchEndpoint[];
  baselineId: string;
  baselineScript: string;
}): Promise<Map<string, ParityResult>> {
  const compared = opts.endpoints.filter((e) => e.baselines?.includes(opts.baselineId) && e.method === 'GET' && e.parity !== false);
  const results = new Map<string, ParityResult>();
  if (compared.length === 0) return results;

  // Every statement object shares the addon's Statement prototype: wrap its run methods.
  const probe = new BetterSqlite3(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, unknown>;
  probe.close();
  let trace: string[] | null = null;
  const originals = new Map<string, unknown>();
  for (const m of ['all', 'get', 'run', 'iterate']) {
    const orig = proto[m] as (this: { source: string }, ...args: unknown[]) => unknown;
    originals.set(m, orig);
    proto[m] = function (this: { source: string }, ...args: unknown[]) {
      trace?.push(normalize(this.source));
      return orig.apply(this, args);
    };
  }

  let service: Injectable | undefined;
  let baseline: Injectable | undefined;
  try {
    const dist = (file: string) => pathToFileURL(path.join(opts.root, 'dist', file)).href;
    const { loadConfig } = (await import(dist('config.js'))) as { loadConfig: (env: NodeJS.ProcessEnv) => unknown };
    const { createApp } = (await import(dist('app.js'))) as { createApp: (config: unknown, options: { logger: false }) => Promise<Injectable> };
    const config = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: opts.databaseUrl,
      CAIRN_DATA_DIR: opts.dataDir,
      LOG_LEVEL: 'silent',
      CAIRN_WORKER: 'false',
      RATE_LIMIT_MAX: '10000000',
      RATE_LIMIT_PUBLIC_MAX: '10000000',
    });
    service = await createApp(config, { logger: false });
    await service.ready();
    const { createBareApp } = (await import(pathToFileURL(path.join(opts.root, opts.baselineScript)).href)) as {
      createBareApp: (file: string, dataDir: string) => Injectable;
    };
    baseline = createBareApp(opts.databaseUrl, opts.dataDir);
    await baseline.ready();

    const run = async (app: Injectable, endpoint: BenchEndpoint, auth: boolean) => {
      trace = [];
      try {
        const res = await app.inject({
          method: endpoint.method,
          url: resolve(endpoint.path, opts.ctx),
          // The service gets the endpoint's own headers too (a delivery token's bearer, a site key).
          headers: auth
            ? { ...(endpoint.auth !== false ? { authorization: `Bearer ${opts.ctx.token}` } : {}), ...resolve(endpoint.headers ?? {}, opts.ctx) }
            : {},
        });
        return { status: res.statusCode, body: res.body, statements: trace };
      } finally {
        trace = null;
      }
    };
    for (const endpoint of compared) {
      // Once each first: statement caches and lazy set-up are not part of the request.
      await run(service, endpoint, true);
      await run(baseline, endpoint, false);
      const a = await run(service, endpoint, true);
      const b = await run(baseline, endpoint, false);
      let answerMismatch: string | null = null;
      if (a.status !== b.status) answerMismatch = `HTTP ${a.status} from the service, ${b.status} from the baseline`;
      else {
        try {
          const diff = firstDifference(canonical(JSON.parse(a.body)), canonical(JSON.parse(b.body)));
          if (diff) answerMismatch = `answers differ at ${diff} (service first; ${a.body.length} vs ${b.body.length} bytes)`;
        } catch (err) {
          answerMismatch = `not JSON: ${err instanceof Error ? err.message : String(err)}`;
        }
      }
      results.set(endpoint.name, {
        answerMismatch,
        baselineOnly: minus(b.statements, a.statements),
        serviceOnly: minus(a.statements, b.statements),
        serviceStatements: a.statements.length,
        baselineStatements: b.statements.length,
      });
    }
    return results;
  } finally {
    for (const [m, orig] of originals) proto[m] = orig;
    await baseline?.close();
    await service?.close();
  }
}
