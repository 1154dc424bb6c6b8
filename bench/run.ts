/**
 * `npm run bench`: measures the built service's hot endpoints next to reference servers.
 *
 * 1. Seeds a SQLite file in a temp dir (migrations, a site, a token with every scope, then each
 *    endpoint's seeder) and closes it; then checks that the per-endpoint baselines answer like
 *    the service and run the same SQL (bench/parity.ts, in this process, before any load).
 * 2. Starts `node dist/server.js` on it, and each baseline (bench/baselines.ts), each in its own
 *    child process, so the load generator (autocannon, in this process) never shares an event
 *    loop with a server it measures.
 * 3. Loads each baseline and endpoint (bench/endpoints.ts) in turn with the same settings, reads
 *    the server's RSS after each, prints a markdown table and the endpoints' targets, and writes
 *    bench/results/latest.json.
 *
 * 4. The noisy-neighbour rows (bench/noisy-neighbour.ts): another site's read p99 while one site
 *    floods heavy writes and searches, as a ratio to its quiet p99.
 * 5. Uploads of a 5 MB JPEG through the API, one at a time (bench/media-upload.ts): p50 and p99.
 *
 * Environment: BENCH_DATABASE_URL (a PostgreSQL server: the run creates a database of its own
 * there, serves it and drops it after; the lean reference is then bench/lean-server-pg.mjs and
 * the same-SQL SQLite reference is left out), BENCH_DURATION (seconds per endpoint, default 5), BENCH_FILTER (only endpoints
 * whose name contains it, or one of several separated by `|`, case-insensitive, `$` at the end for a whole name; their seeders only), BENCH_SEED=api (the blog is
 * filled through the API of the running server, then its reads are measured on that server and
 * again after a restart), BENCH_PROFILE_DIR (the server
 * writes its V8 CPU profile there), BENCH_SERVER_NODE_ARGS (node flags for the server). Exit
 * code 1 when the server does not start, any run had non-2xx responses, connection errors or
 * timeouts, or a baseline does not do the same work as the service; a missed target is printed,
 * not an error.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { baselinesFor } from './baselines.js';
import { createBenchDatabase } from './postgres.js';
import { otherCpuMeter } from './cpu.js';
import { freePort, rssMb, startChild, stopChild, waitForHttp, type Child } from './children.js';
import { ENDPOINTS, resolve, type BenchContext, type BenchEndpoint } from './endpoints.js';
import { measure, preflight, type LoadSettings, type Measurement, type Target } from './measure.js';
import {
  formatHeader,
  formatNoiseNotes,
  formatServiceOnlySql,
  formatTable,
  formatTargets,
  formatWarnings,
  machineInfo,
  type BaselineResult,
  type BenchReport,
  type EndpointResult,
} from './report.js';
import { seedDatabase } from './seed.js';
import { seedBlog, seedBlogThroughApi } from './seed-blog.js';
import { checkParity, statementLabel, type ParityResult } from './parity.js';
import { formatNoisyNeighbour, measureNoisyNeighbour, type NoisyNeighbourRow } from './noisy-neighbour.js';
import { formatUploads, measureUploads, type UploadRow } from './media-upload.js';
import { type CollectorRow, formatCollector, measureCollector } from './analytics-collector.js';
import { formatReports, measureReports } from './analytics-reports.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER_ENTRY = path.join(ROOT, 'dist', 'server.js');
const RESULTS_FILE = path.join(ROOT, 'bench', 'results', 'latest.json');

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number of seconds, got "${raw}"`);
  return value;
}

const log = (line = '') => process.stdout.write(`${line}\n`);

/** The request autocannon repeats for one endpoint (path/body/headers resolved against the seeded context). */
function targetFor(endpoint: BenchEndpoint, ctx: BenchContext, baseUrl: string, pathOverride?: string): Target {
  const headers: Record<string, string> = { ...(endpoint.headers ? resolve(endpoint.headers, ctx) : {}) };
  if (endpoint.auth !== false) headers.authorization = `Bearer ${ctx.token}`;
  let body: string | undefined;
  if (endpoint.body !== undefined) {
    body = JSON.stringify(resolve(endpoint.body, ctx));
    headers['content-type'] ??= 'application/json';
  }
  return {
    url: `${baseUrl}${pathOverride ?? resolve(endpoint.path, ctx)}`,
    method: endpoint.method,
    headers,
    body,
    idReplacement: endpoint.uniqueIds,
    expectStatus: endpoint.expectStatus,
  };
}

async function main(): Promise<number> {
  const settings: LoadSettings = { connections: 10, durationSec: positiveNumber('BENCH_DURATION', 5), warmupSec: 1 };
  const filter = process.env.BENCH_FILTER?.trim().toLowerCase();
  // Several filters separated by `|`: a row is measured when its name contains any of them, or,
  // for a filter ending in `$`, when its name is that filter (one row whose name starts others').
  const matches = (name: string, f: string) => (f.endsWith('$') ? name === f.slice(0, -1) : name.includes(f));
  const wanted = (name: string) => !filter || filter.split('|').some((f) => f && matches(name.toLowerCase(), f));
  const endpoints = ENDPOINTS.filter((e) => wanted(e.name));
  if (endpoints.length === 0 && !['noisy neighbour', 'media upload', 'analytics collector', 'analytics reports'].some(wanted))
    throw new Error(`BENCH_FILTER="${filter}" matches no endpoint`);
  if (!existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run \`npm run build\` first (\`npm run bench\` does)`);

  const startedAt = new Date().toISOString();
  const machine = machineInfo(ROOT);
  // Half a second of the machine at rest (nothing of ours running yet): is something else busy?
  const idleMeter = otherCpuMeter([process.pid]);
  await new Promise((r) => setTimeout(r, 500));
  log(formatHeader(machine, settings, idleMeter()));
  log(`server: dist/server.js, built ${statSync(SERVER_ENTRY).mtime.toISOString()}`);

  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const children: Child[] = [];
  let dropDatabase: () => Promise<void> = async () => undefined;
  // Ctrl-C during a run: stop the servers, drop a PostgreSQL database and remove the temp dir before leaving.
  const cleanup = async () => {
    await Promise.all(children.map((c) => stopChild(c)));
    await dropDatabase().catch((err) => log(`could not drop the bench database: ${err instanceof Error ? err.message : String(err)}`));
    rmSync(tmp, { recursive: true, force: true });
  };
  const onSignal = () => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    // 1. Seed before the server opens the file, so the server starts on a realistic database.
    // BENCH_DATABASE_URL (a PostgreSQL server): the run gets a database of its own there, dropped after.
    const onPostgres = process.env.BENCH_DATABASE_URL ? await createBenchDatabase(process.env.BENCH_DATABASE_URL) : null;
    if (onPostgres) dropDatabase = onPostgres.drop;
    const databaseUrl = onPostgres?.url ?? path.join(tmp, 'cairn.db');
    const baselines = baselinesFor(onPostgres ? 'postgres' : 'sqlite');
    log(`database: ${onPostgres ? `PostgreSQL (${onPostgres.name})` : 'SQLite'}`);
    // BENCH_SEED=api: the blog is filled through the API of the running server (below), as a user
    // fills a site, instead of straight into the file before it starts.
    const throughApi = process.env.BENCH_SEED === 'api' && endpoints.some((e) => e.seed === seedBlog);
    const seeded = await seedDatabase(databaseUrl, endpoints, throughApi ? [seedBlog] : []);
    const ctx = seeded.ctx;
    for (const t of seeded.timings) log(`seeded ${t.seeder} in ${(t.ms / 1000).toFixed(1)} s${t.summary ? `: ${t.summary}` : ''}`);

    // Same answers and same SQL from the per-endpoint baselines, checked in this process
    // (bench/parity.ts): before the server opens the file, or after the API filled it.
    const parity = new Map<string, Map<string, ParityResult>>();
    const parityErrors: string[] = [];
    const checkAllParity = async () => {
      for (const b of baselines) {
        if (!b.parity) continue;
        try {
          parity.set(b.id, await checkParity({ root: ROOT, databaseUrl, dataDir: tmp, ctx, endpoints, baselineId: b.id, baselineScript: b.script }));
        } catch (err) {
          parityErrors.push(`${b.label}: the parity check could not run, its ratios are unchecked: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    };
    if (!throughApi) await checkAllParity();

    // 2. The built service. REDIS_URL and PUBLIC_URL are dropped so a developer's shell does not
    // change what is measured. The rate limits are raised out of the way: every request carries
    // the same token from the same address (the per-address connection cap too). 10,000,000 per minute is the largest value config.ts
    // accepts, far above any rate reached here.
    const { REDIS_URL: _redis, PUBLIC_URL: _publicUrl, ...inherited } = process.env;
    const serverPort = await freePort();
    const serverEnv: NodeJS.ProcessEnv = {
      ...inherited,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      CAIRN_DATA_DIR: tmp,
      PORT: String(serverPort),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '10000000',
      RATE_LIMIT_PUBLIC_MAX: '10000000',
      ANALYTICS_RATE_LIMIT_MAX: '10000000',
      ANALYTICS_SITE_MAX_EVENTS_PER_MIN: '100000000',
      // Every client of the bench (the measured load, the floods, the seeding) is 127.0.0.1.
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000000',
    };
    // BENCH_PROFILE_DIR: the server writes a V8 CPU profile there when it exits (node --cpu-prof).
    const profileArgs = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
    // The node flags of `npm start` (package.json), so the bench measures the server as users run it;
    // BENCH_SERVER_NODE_ARGS replaces them.
    const startScript: string = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start;
    const startFlags = startScript.match(/^node((?: --\S+)*) /)?.[1] ?? '';
    const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? startFlags).split(' ').filter(Boolean);
    log(`server node flags: ${nodeArgs.join(' ') || 'none'}`);
    const serverUrl = `http://127.0.0.1:${serverPort}`;
    const startServer = async () => {
      const child = startChild('cairn server', [...nodeArgs, ...profileArgs, SERVER_ENTRY], serverEnv, ROOT);
      children.push(child);
      try {
        await waitForHttp(child, `${serverUrl}/health`);
      } catch (err) {
        // The seeding above ran the migrations of src/ (through tsx); the server runs those of dist/.
        // A build older than src/ refuses the database ("previously executed migration ... is missing").
        const hint = /migration/i.test(child.output())
          ? '\nhint: the database is seeded from src/ but served by dist/; run `npm run build` (npm run bench does) so both have the same migrations'
          : '';
        throw new Error(`${err instanceof Error ? err.message : String(err)}${hint}`);
      }
      return child;
    };
    let server = await startServer();
    if (throughApi) {
      const started = performance.now();
      const { summary, ...added } = await seedBlogThroughApi(serverUrl, ctx.token, ctx.siteId, ctx.userId);
      Object.assign(ctx, added);
      log(`seeded seedBlogThroughApi in ${((performance.now() - started) / 1000).toFixed(1)} s on the running server: ${String(summary)}`);
      await checkAllParity();
    }

    // The reference servers, each on its own port, with the same database at hand.
    const baselineUrls = new Map<string, string>();
    const baselineChildren = new Map<string, Child>();
    for (const b of baselines) {
      const port = await freePort();
      const child = startChild(b.label, [path.join(ROOT, b.script)], { ...serverEnv, PORT: String(port), CAIRN_URL: serverUrl }, ROOT);
      children.push(child);
      const url = `http://127.0.0.1:${port}`;
      await waitForHttp(child, `${url}${b.readyPath}`, b.readyTimeoutMs);
      baselineUrls.set(b.id, url);
      baselineChildren.set(b.id, child);
    }
    // Ours: the bench's children (the server is started again after a restart).
    const ourPids = () => children.map((c) => c.pid);
    const serverIdleRssMb = rssMb(server.pid);
    log(`cairn server pid ${server.pid}, RSS ${serverIdleRssMb?.toFixed(0) ?? '?'} MB before load`);
    log();

    // 3a. Baselines measured once, first.
    const baselineResults: BaselineResult[] = [];
    for (const b of baselines) {
      if (b.pathFor || b.path === undefined) continue;
      const child = baselineChildren.get(b.id)!;
      process.stderr.write(`measuring ${b.label} ...\n`);
      const target: Target = { url: `${baselineUrls.get(b.id)}${b.path}`, method: 'GET', headers: {} };
      baselineResults.push({ id: b.id, label: b.label, path: b.path, result: await measure(target, settings, { serverPid: child.pid, ourPids: ourPids() }) });
    }

    // 3b. Each endpoint, then its per-endpoint baselines with the same request shape.
    const endpointResults: EndpointResult[] = [];
    const measureEndpoint = async (endpoint: BenchEndpoint, rowName = endpoint.name) => {
      process.stderr.write(`measuring ${rowName} ...\n`);
      const target = targetFor(endpoint, ctx, serverUrl);
      const entry: EndpointResult = {
        name: rowName,
        method: endpoint.method,
        path: target.url.slice(serverUrl.length),
        result: null,
        vs: {},
        ...(endpoint.targets ? { targets: endpoint.targets } : {}),
      };
      endpointResults.push(entry);
      const problem = await preflight(target);
      if (problem) {
        entry.error = problem;
        return;
      }
      const result = await measure(target, settings, { serverPid: server.pid, ourPids: ourPids() });
      entry.result = result;
      for (const b of baselines) {
        let base: Measurement | undefined;
        if (b.pathFor) {
          const p = b.pathFor(endpoint, ctx);
          if (p === null) {
            entry.vs[b.id] = { ratio: null, none: true };
            continue;
          }
          const child = baselineChildren.get(b.id)!;
          process.stderr.write(`measuring ${rowName} on ${b.label} ...\n`);
          base = await measure(targetFor(endpoint, ctx, baselineUrls.get(b.id)!, p), settings, { serverPid: child.pid, ourPids: ourPids() });
        } else base = baselineResults.find((r) => r.id === b.id)?.result;
        const same = parity.get(b.id)?.get(endpoint.name);
        const mismatch =
          same?.answerMismatch ??
          (same?.baselineOnly.length ? `it runs statements the service does not: ${same.baselineOnly.map(statementLabel).join(' | ')}` : undefined);
        entry.vs[b.id] = {
          ratio: base && base.reqPerSec > 0 ? result.reqPerSec / base.reqPerSec : null,
          ...(b.pathFor && base ? { result: base } : {}),
          ...(mismatch ? { mismatch } : {}),
          ...(same ? { serviceOnlySql: same.serviceOnly } : {}),
        };
      }
    };
    for (const endpoint of endpoints)
      await measureEndpoint(endpoint, throughApi && endpoint.seed === seedBlog ? `${endpoint.name} (filled, no restart)` : endpoint.name);
    // Filled through the API: the blog's reads again on a server restarted on the same file (the
    // statistics and caches a fresh start has), next to the rows of the server that was filled.
    if (throughApi) {
      await stopChild(server);
      children.splice(children.indexOf(server), 1);
      server = await startServer();
      for (const endpoint of endpoints)
        if (endpoint.seed === seedBlog && endpoint.method === 'GET') await measureEndpoint(endpoint, `${endpoint.name} (filled, restarted)`);
    }
    // 3c. Another tenant's reads while one site floods heavy requests (issue 16 item 6).
    let noisy: NoisyNeighbourRow[] = [];
    if (wanted('noisy neighbour')) {
      process.stderr.write('measuring the noisy neighbour rows ...\n');
      noisy = await measureNoisyNeighbour(serverUrl, ctx, settings, { serverPid: server.pid, ourPids: ourPids() });
    }
    // 3c'. The analytics collector (issue 31): events a second, nothing dropped, the bare node:http ceiling beside it.
    let collectorRows: CollectorRow[] = [];
    if (wanted('analytics collector')) {
      process.stderr.write('measuring the analytics collector ...\n');
      collectorRows = await measureCollector(serverUrl, databaseUrl, ctx, settings, { serverPid: server.pid, ourPids: ourPids() }, ROOT);
    }
    // 3c''. The analytics reports (issue 32) over a database filled by bench/analytics-import.ts, when one is named.
    let reportRows: Awaited<ReturnType<typeof measureReports>> | null = null;
    if (process.env.ANALYTICS_REPORTS_DB && wanted('analytics reports')) {
      process.stderr.write('measuring the analytics reports ...\n');
      reportRows = await measureReports(path.resolve(process.env.ANALYTICS_REPORTS_DB));
    }
    // 3d. Uploads of a 5 MB photo, one at a time (issue 10).
    let uploads: UploadRow | null = null;
    if (wanted('media upload')) {
      process.stderr.write('measuring media uploads ...\n');
      uploads = await measureUploads(serverUrl, ctx, server.pid);
    }
    if (server.proc.exitCode !== null) throw new Error(`the cairn server exited during the run\n${server.output()}`);

    const report: BenchReport = {
      startedAt,
      finishedAt: new Date().toISOString(),
      machine,
      settings,
      seed: seeded.timings,
      serverIdleRssMb,
      baselines: baselineResults,
      endpoints: endpointResults,
      ...(noisy.length ? { noisyNeighbour: noisy } : {}),
      ...(uploads ? { mediaUploads: uploads } : {}),
      ...(collectorRows.length ? { analyticsCollector: collectorRows } : {}),
      ...(reportRows ? { analyticsReports: reportRows } : {}),
      ok: false,
    };
    const warnings = [...parityErrors, ...formatWarnings(report)];
    report.ok = warnings.length === 0;

    log(formatTable(report, baselines));
    log();
    if (noisy.length) {
      log(formatNoisyNeighbour(noisy));
      log();
    }
    if (uploads) {
      log(formatUploads(uploads));
      log();
    }
    if (collectorRows.length) {
      log(formatCollector(collectorRows));
      log();
    }
    if (reportRows) {
      log(formatReports(reportRows));
      log();
    }
    const targets = formatTargets(report, baselines);
    if (targets.length) {
      log('targets:');
      for (const t of targets) log(t);
      log();
    }
    for (const w of warnings) log(`⚠ ${w}`);
    for (const n of formatNoiseNotes(report)) log(`note: ${n}`);
    for (const n of formatServiceOnlySql(report, baselines)) log(`note: ${n}`);
    if (warnings.length) {
      // The server's own warn/error log lines usually say why requests failed.
      const tail = server.output().trim();
      if (tail) log(`\ncairn server output (last lines):\n${tail.split('\n').slice(-20).join('\n')}`);
    }
    mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
    writeFileSync(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
    log(`results: ${path.relative(ROOT, RESULTS_FILE)}`);
    return report.ok ? 0 : 1;
  } finally {
    await cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
