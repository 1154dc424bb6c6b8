/**
 * `npm run bench:search-console` (issue 34): the six search-console reports over 16 months of
 * synced data, 5,000 queries and 2,000 pages a day (about 2.4 million query rows and 1 million
 * page rows), on SQLite.
 *
 * 1. Migrates a SQLite file in a temp dir, creates a site with a token and a connection row.
 * 2. Seeds the daily rows directly with SQL: prepared statements in one transaction, rows in
 *    primary-key order (the daily rows are a WITHOUT ROWID table keyed by site, kind, date, key).
 *    The queries come from a pool of 20,000 and the pages from 3,000, a rotating slice each day;
 *    about 70% of the rows have no clicks, as in real data.
 * 3. Builds the app on the file and requests each report in turn, one at a time (app.inject: the
 *    query's own time plus routing and serialization, no network), for the default period (28d),
 *    90d and 16m (read from the period snapshots the sync rebuilds, timed here too), and for 28
 *    explicit days (`startDate`/`endDate`, summed from the daily rows): BENCH_SC_RUNS measured
 *    requests each (default 40) after 3 warm-ups.
 *    Prints p50 and p95 per endpoint and period; the target is p95 <= 100 ms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { connectDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createToken } from '../src/modules/api-tokens/api-tokens.service.js';
import { addDays, addMonths, pacificDay } from '../src/modules/search-console/search-console.dates.js';
import { rebuildSnapshots } from '../src/modules/search-console/search-console.reports.js';
import { createSite } from '../src/modules/sites/sites.service.js';

const QUERIES_A_DAY = 5_000;
const PAGES_A_DAY = 2_000;
const QUERY_POOL = 20_000;
const PAGE_POOL = 3_000;
const RUNS = Number(process.env.BENCH_SC_RUNS ?? 40);
const TARGET_P95_MS = 100;

/** A small deterministic PRNG (mulberry32): the same data on every run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function prepare(file: string) {
  const database = connectDatabase({ databaseUrl: file });
  try {
    await migrateToLatest(database);
    const site = await createSite(database.db, { name: 'Search Bench', domain: 'search-bench.test' });
    const token = await createToken(database.db, { siteId: site.id, userId: site.ownerUserId, name: 'bench', scopes: 'all' });
    return { siteId: site.id, token: token.token };
  } finally {
    await database.close();
  }
}

function seed(file: string, siteId: string) {
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = OFF');
  const today = pacificDay(new Date());
  const last = addDays(today, -3);
  const first = addDays(addMonths(today, -16), 1);
  const rand = random(34);
  const started = performance.now();
  let rows = 0;
  sqlite.transaction(() => {
    const at = new Date().toISOString();
    sqlite
      .prepare(
        `insert into search_connections (site_id, property_url, auth_type, client_email, credentials, status, connected_at, last_sync_at, backfilled_from)
         values (?, 'sc-domain:search-bench.test', 'service_account', 'bench@example.iam', 'enc:v1:bench', 'ok', ?, ?, ?)`,
      )
      .run(siteId, at, at, first);
    const key = sqlite.prepare('insert into search_keys (site_id, kind, key) values (?, ?, ?)');
    const queryIds: number[] = [];
    const pageIds: number[] = [];
    for (let i = 0; i < QUERY_POOL; i++) queryIds.push(Number(key.run(siteId, 'query', `query number ${i} about headless cms`).lastInsertRowid));
    for (let i = 0; i < PAGE_POOL; i++) pageIds.push(Number(key.run(siteId, 'page', `https://search-bench.test/blog/post-${i}`).lastInsertRowid));
    const total = sqlite.prepare('insert into search_daily_totals (site_id, date, clicks, impressions, position_sum) values (?, ?, ?, ?, ?)');
    const row = sqlite.prepare('insert into search_daily_rows (site_id, kind, date, key_id, clicks, impressions, position_sum) values (?, ?, ?, ?, ?, ?, ?)');
    let dayIndex = 0;
    for (let date = first; date <= last; date = addDays(date, 1), dayIndex++) {
      let clicks = 0;
      let impressions = 0;
      let positionSum = 0;
      for (const [kind, ids, perDay] of [
        ['query', queryIds, QUERIES_A_DAY],
        ['page', pageIds, PAGES_A_DAY],
      ] as const) {
        const start = (dayIndex * 997) % ids.length;
        const today = Array.from({ length: perDay }, (_, i) => ids[(start + i) % ids.length]!).sort((a, b) => a - b);
        for (const id of today) {
          const c = rand() < 0.7 ? 0 : 1 + Math.floor(rand() ** 3 * 50);
          const imp = c + 1 + Math.floor(rand() * 2000);
          const pos = (1 + rand() * 59) * imp;
          row.run(siteId, kind, date, id, c, imp, pos);
          if (kind === 'query') {
            clicks += c;
            impressions += imp;
            positionSum += pos;
          }
          rows++;
        }
      }
      total.run(siteId, date, clicks, impressions, positionSum);
    }
  })();
  sqlite.pragma('optimize');
  sqlite.close();
  return { rows, seconds: (performance.now() - started) / 1000, first, last };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-sc-'));
  const file = path.join(dir, 'bench.db');
  try {
    const { siteId, token } = await prepare(file);
    const seeded = seed(file, siteId);
    process.stdout.write(`Seeded ${seeded.rows.toLocaleString('en')} daily rows (${seeded.first} .. ${seeded.last}) in ${seeded.seconds.toFixed(1)} s\n`);
    // What every sync run does after storing its days: the snapshots of the named periods.
    const database = connectDatabase({ databaseUrl: file });
    const t0 = performance.now();
    try {
      await rebuildSnapshots(database.db, siteId, seeded.last);
    } finally {
      await database.close();
    }
    process.stdout.write(`Period snapshots (8 periods x queries and pages) rebuilt in ${((performance.now() - t0) / 1000).toFixed(1)} s\n\n`);
    const config = loadConfig(
      { LOG_LEVEL: 'silent', CAIRN_DATA_DIR: dir, CAIRN_SECRET_KEY: 'b'.repeat(64) },
      { databaseUrl: file, worker: { enabled: false, pollMs: 1000 }, rateLimit: { max: 1_000_000, publicMax: 1_000_000, windowMs: 60_000 } },
    );
    const app = await createApp(config, { logger: false });
    await app.ready();
    const lines = ['| endpoint | period | p50 ms | p95 ms | target p95 <= 100 ms |', '|---|---|---:|---:|---|'];
    const paths = ['stats', 'growing-queries', 'lost-queries', 'growing-pages', 'declining-pages', 'links'];
    try {
      const dates = `startDate=${addDays(seeded.last, -27)}&endDate=${seeded.last}`;
      for (const period of ['period=28d', 'period=90d', 'period=16m', dates]) {
        for (const p of paths) {
          const url = `/v1/integrations/search/${p}?${period}`;
          const times: number[] = [];
          for (let i = 0; i < RUNS + 3; i++) {
            const t0 = performance.now();
            const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
            const ms = performance.now() - t0;
            if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
            if (i >= 3) times.push(ms);
          }
          times.sort((a, b) => a - b);
          const p95 = percentile(times, 95);
          lines.push(
            `| GET /v1/integrations/search/${p} | ${period === dates ? '28 days as dates' : period.slice(7)} | ${percentile(times, 50).toFixed(1)} | ${p95.toFixed(1)} | ${p95 <= TARGET_P95_MS ? 'met' : 'missed'} |`,
          );
        }
      }
    } finally {
      await app.close();
    }
    process.stdout.write(
      `${lines.join('\n')}\n\n${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), Node ${process.version}, ${RUNS} requests each, one at a time.\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
