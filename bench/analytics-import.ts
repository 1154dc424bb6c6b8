/**
 * `npx tsx bench/analytics-import.ts`: imports ANALYTICS_IMPORT_EVENTS events (default 10,000,000)
 * into a fresh SQLite file through `POST /v1/analytics/import` of the built server (`npm run
 * build` first), 10,000 a request, one request at a time, then rebuilds every day's rollups, and
 * prints the time, events a second and the database size per event: the data part 2's reports
 * are measured on (decisions A7). The file is kept when ANALYTICS_IMPORT_KEEP=1 (its path is printed).
 * ANALYTICS_IMPORT_PG_URL=postgres://… (a server) imports into a new PostgreSQL database there
 * instead (kept the same way; its URL is printed). ANALYTICS_IMPORT_RESUME=<a kept database's URL>
 * goes on with an import that stopped: the events it holds are skipped (the same generator), and
 * the rest imported into it. ANALYTICS_IMPORT_CONCURRENCY (default 1) requests are sent at a time:
 * PostgreSQL imports through one request at a time use one core of two; with two in flight, a
 * visitor whose events straddle two concurrent requests may get one session more than in order.
 *
 * The events: a year of days ending yesterday, ~27,000 a day for 10M; visitors of a few sessions
 * each, 3-8 events a session (pageviews, engagement, clicks, goals), 500 paths, 40 referrers, 30
 * countries, 3 devices: a plausible mix, deterministic for a given count.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { connectDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createToken } from '../src/modules/api-tokens/api-tokens.service.js';
import { analyticsOf } from '../src/modules/analytics/analytics.routes.js';
import { rebuildDirtyDays } from '../src/modules/analytics/analytics.tasks.js';
import { createSite } from '../src/modules/sites/sites.service.js';
import { BROWSERS, COUNTRIES, DEVICES, random } from './analytics-data.js';
import { freePort, startChild, stopChild, waitForHttp } from './children.js';
import { adminStatement, createBenchDatabase } from './postgres.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOTAL = Number(process.env.ANALYTICS_IMPORT_EVENTS ?? 10_000_000);
const PER_REQUEST = 10_000;
const DAY_MS = 86_400_000;
const log = (line: string) => process.stdout.write(`${line}\n`);

const REFERRERS = [
  null,
  null,
  null,
  'https://www.google.com/',
  'https://www.bing.com/',
  'https://duckduckgo.com/',
  'https://news.ycombinator.com/',
  'https://t.co/x',
  ...Array.from({ length: 32 }, (_, i) => `https://blog${i}.example.org/post`),
];

function* events(total: number): Generator<Record<string, unknown>> {
  const rnd = random(42);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const end = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const start = end - 365 * DAY_MS;
  let made = 0;
  let visitor = 0;
  while (made < total) {
    visitor++;
    const sessions = 1 + Math.floor(rnd() * 3);
    for (let s = 0; s < sessions && made < total; s++) {
      let t = start + Math.floor(((made / total) * 365 + rnd() * 0.5) * DAY_MS);
      if (t >= end) t = end - 60_000;
      const facts = {
        country: pick(COUNTRIES),
        device: pick(DEVICES),
        browser: pick(BROWSERS),
        os: 'Linux',
        referrer: pick(REFERRERS) ?? undefined,
        language: 'en',
        screen: '1440x900',
      };
      const n = 3 + Math.floor(rnd() * 6);
      for (let e = 0; e < n && made < total; e++) {
        const path = `/page-${Math.floor(rnd() * rnd() * 500)}`;
        const kind = e === 0 || rnd() < 0.35 ? 'pageview' : rnd() < 0.6 ? 'engagement' : rnd() < 0.9 ? 'click' : 'goal';
        const event: Record<string, unknown> = { id: `e${made}`, timestamp: new Date(t).toISOString(), visitorId: `v${visitor}`, path, type: kind, ...facts };
        if (kind === 'engagement') Object.assign(event, { engagedMs: Math.floor(rnd() * 60_000), scrollDepth: Math.floor(rnd() * 100) });
        if (kind === 'click')
          Object.assign(event, {
            x: Math.round(rnd() * 10_000) / 10_000,
            y: Math.floor(rnd() * 3000),
            selector: `main > a:nth-of-type(${1 + Math.floor(rnd() * 5)})`,
          });
        if (kind === 'goal') event.name = 'signup';
        made++;
        t += Math.floor(rnd() * 120_000);
        yield event;
      }
    }
  }
}

/** The database's bytes: the SQLite file with its WAL, or PostgreSQL's `pg_database_size`. */
async function sizeOf(databaseUrl: string, pg: boolean): Promise<number> {
  if (!pg) return ['', '-wal'].reduce((sum, s) => sum + (statSync(databaseUrl + s, { throwIfNoEntry: false })?.size ?? 0), 0);
  const database = connectDatabase({ databaseUrl });
  try {
    return Number((await sql<{ n: string }>`select pg_database_size(current_database()) as n`.execute(database.db)).rows[0]!.n);
  } finally {
    await database.close();
  }
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-analytics-import-'));
  // ANALYTICS_IMPORT_PG_URL (a PostgreSQL server): a database of the bench's own there instead of a SQLite file.
  const pgServer = process.env.ANALYTICS_IMPORT_PG_URL;
  const resume = process.env.ANALYTICS_IMPORT_RESUME;
  const pgDatabase = resume ? null : pgServer ? await createBenchDatabase(pgServer) : null;
  const onPostgres = pgDatabase !== null || Boolean(resume?.startsWith('postgres'));
  const databaseUrl = resume ?? pgDatabase?.url ?? path.join(dir, 'cairn.db');
  const seeding = connectDatabase({ databaseUrl });
  await migrateToLatest(seeding);
  const site = resume
    ? await seeding.db
        .selectFrom('sites')
        .innerJoin('users', (j) => j.onRef('users.site_id', '=', 'sites.id').on('users.is_owner', '=', true))
        .select(['sites.id as id', 'users.id as ownerUserId'])
        .where('sites.name', '=', 'Analytics Bench')
        .executeTakeFirstOrThrow()
    : await createSite(seeding.db, { name: 'Analytics Bench', domain: 'bench.test' });
  const { token } = await createToken(seeding.db, { siteId: site.id, userId: site.ownerUserId, name: 'bench', scopes: 'all' });
  const held = resume
    ? Number((await sql<{ n: string }>`select count(*) as n from analytics_events where site_id = ${site.id}`.execute(seeding.db)).rows[0]!.n)
    : 0;
  await seeding.close();
  if (held % PER_REQUEST !== 0) throw new Error(`the database holds ${held} events: not whole requests of ${PER_REQUEST}, so not where a run stopped`);
  const emptyBytes = resume ? 0 : await sizeOf(databaseUrl, onPostgres);
  const concurrency = Math.max(1, Number(process.env.ANALYTICS_IMPORT_CONCURRENCY ?? 1) || 1);

  const port = await freePort();
  const server = startChild(
    'cairn server',
    [path.join(ROOT, 'dist', 'server.js')],
    {
      ...process.env,
      DATABASE_URL: databaseUrl,
      CAIRN_DATA_DIR: dir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '10000000',
      CAIRN_WORKER: 'false',
    },
    ROOT,
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(server, `${url}/health`);
    const started = performance.now();
    let imported = held;
    let batch: Array<Record<string, unknown>> = [];
    const inFlight = new Set<Promise<void>>();
    const send = async (events: Array<Record<string, unknown>>) => {
      const res = await fetch(`${url}/v1/analytics/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
        body: events.map((e) => JSON.stringify(e)).join('\n'),
      });
      const body = (await res.json()) as { imported: number; errorCount: number };
      if (res.status !== 201 || body.errorCount) throw new Error(`import answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
      imported += body.imported;
      if (imported % 500_000 === 0) log(`${imported.toLocaleString('en')} events, ${((performance.now() - started) / 1000).toFixed(0)} s`);
      // A server without autovacuum (this machine's) never analyzes the table: with no statistics
      // the import's key check scanned every event of the site per request, 1-2 s at 1.6M events.
      if (onPostgres && imported % 1_000_000 === 0) await adminStatement(databaseUrl, 'analyze');
    };
    const flush = async () => {
      const sending = send(batch).finally(() => inFlight.delete(sending));
      inFlight.add(sending);
      batch = [];
      if (inFlight.size >= concurrency) await Promise.race(inFlight);
    };
    let skip = held;
    for (const event of events(TOTAL)) {
      if (skip > 0) {
        skip--;
        continue;
      }
      batch.push(event);
      if (batch.length === PER_REQUEST) await flush();
    }
    if (batch.length) await flush();
    await Promise.all(inFlight);
    const importSec = (performance.now() - started) / 1000;
    const importedNow = imported - held;
    await stopChild(server);

    const database = connectDatabase({ databaseUrl });
    await database.refreshStatistics();
    const rebuildStart = performance.now();
    const { store } = analyticsOf(database.db);
    let days = 0;
    for (let n = 1; n > 0; days += n) n = await rebuildDirtyDays(store, Date.now() + DAY_MS, 0);
    const rebuildSec = (performance.now() - rebuildStart) / 1000;
    // The WAL's pages go into the file first, so the size is the data's, not a log's.
    if (!onPostgres) await sql`pragma wal_checkpoint(TRUNCATE)`.execute(database.db);
    await database.close();
    const bytes = (await sizeOf(databaseUrl, onPostgres)) - emptyBytes;
    log('');
    log('| events imported | import time | events/s | rollup rebuild (days) | database growth | bytes per event |');
    log('| ---: | ---: | ---: | ---: | ---: | ---: |');
    log(
      `| ${imported.toLocaleString('en')}${held ? ` (${held.toLocaleString('en')} before this run)` : ''} | ${importSec.toFixed(0)} s | ${(importedNow / importSec).toFixed(0)} | ${rebuildSec.toFixed(0)} s (${days}) | ${(bytes / 1e6).toFixed(0)} MB | ${(bytes / imported).toFixed(0)} |`,
    );
  } finally {
    if (server.proc.exitCode === null) await stopChild(server);
    if (process.env.ANALYTICS_IMPORT_KEEP === '1' || resume) log(`database: ${databaseUrl}`);
    else {
      rmSync(dir, { recursive: true, force: true });
      await pgDatabase?.drop();
    }
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`analytics import bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
