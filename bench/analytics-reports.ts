/**
 * The analytics reports over a large database (issue 32, decisions A7): each report for the 30
 * and the 365 days ending on the data's last day, unfiltered, with one filter (`country=DE`) and
 * with two (`country=DE&device=mobile`), one request at a time against the built server: p50,
 * p95 (target ≤ 200 ms), sampled answers flagged, and the database's size.
 *
 * The database is the one `bench/analytics-import.ts` fills through the import endpoint (run it
 * with ANALYTICS_IMPORT_KEEP=1): `npx tsx bench/analytics-reports.ts <file.db>`, or `npm run
 * bench` with ANALYTICS_REPORTS_DB=<file.db> adds these rows. Seeding 10M events takes far longer
 * than the rest of the bench, so the bench never seeds it itself. ANALYTICS_REPORTS_RUNS sets
 * the requests per row (default 20, after one warm-up), ANALYTICS_REPORTS_ONLY (a comma list) the
 * reports whose path contains one of its words. A postgres:// URL instead of the file measures
 * that database (bench/analytics-import.ts with ANALYTICS_IMPORT_PG_URL fills one).
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { connectDatabase } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createToken } from '../src/modules/api-tokens/api-tokens.service.js';
import { freePort, startChild, stopChild, waitForHttp } from './children.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DAY_MS = 86_400_000;

export interface ReportRow {
  report: string;
  days: number;
  filters: string;
  p50: number;
  p95: number;
  sampled: boolean;
}

const REPORTS = [
  'overview',
  'chart',
  'pages',
  'referrers',
  'countries',
  'cities',
  'devices/screens',
  'devices',
  'campaigns',
  'filter-values?dimension=browser',
  // The event reports (bench/analytics-event-reports.ts seeds every event type for them; this file's data has clicks, engagement and goals).
  'engagement',
  'forms-analytics',
  'cwv',
  'sessions',
  'sessions/heatmap',
  'heatmap?path=/page-1',
  'heatmap/scroll?path=/page-1',
];
const FILTERS = ['', 'country=DE', 'country=DE&device=mobile'];

const dateOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/**
 * The site, a token for it, the data's last local day, and the counts of the file. The file is
 * migrated here first: a migration that builds indexes over 10M events takes minutes, longer
 * than the server's start-up wait, and its time is worth a line of its own.
 */
async function prepare(databaseUrl: string) {
  const database = connectDatabase({ databaseUrl });
  try {
    const migrating = performance.now();
    await migrateToLatest(database);
    process.stderr.write(`migrated to the latest schema in ${((performance.now() - migrating) / 1000).toFixed(0)} s\n`);
    const site = await database.db.selectFrom('sites').select('id').orderBy('created_at').executeTakeFirstOrThrow();
    const owner = await database.db.selectFrom('users').select('id').where('site_id', '=', site.id).orderBy('created_at').executeTakeFirstOrThrow();
    const { token } = await createToken(database.db, { siteId: site.id, userId: owner.id, name: 'reports bench', scopes: 'all' });
    const last = await sql<{ day: number; events: number; sessions: number }>`select
        (select max(day) from analytics_sessions) as day,
        (select count(*) from analytics_events) as events,
        (select count(*) from analytics_sessions) as sessions`.execute(database.db);
    const row = last.rows[0]!;
    const pgBytes =
      database.dialect === 'postgres'
        ? Number((await sql<{ n: string }>`select pg_database_size(current_database()) as n`.execute(database.db)).rows[0]!.n)
        : undefined;
    return { token, lastDay: Number(row.day), events: Number(row.events), sessions: Number(row.sessions), pgBytes };
  } finally {
    await database.close();
  }
}

export async function measureReports(databaseUrl: string, runs = Number(process.env.ANALYTICS_REPORTS_RUNS ?? 20)) {
  const { token, lastDay, events, sessions, pgBytes } = await prepare(databaseUrl);
  const bytes = pgBytes ?? ['', '-wal'].reduce((sum, s) => sum + (statSync(databaseUrl + s, { throwIfNoEntry: false })?.size ?? 0), 0);
  // ANALYTICS_REPORTS_ONLY=scroll,cwv: only the reports whose path contains one of those.
  const only = process.env.ANALYTICS_REPORTS_ONLY?.split(',');
  const reports = only ? REPORTS.filter((r) => only.some((o) => r.includes(o))) : REPORTS;
  const port = await freePort();
  const server = startChild(
    'cairn server',
    [path.join(ROOT, 'dist', 'server.js')],
    { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '10000000', CAIRN_WORKER: 'false' },
    ROOT,
  );
  const url = `http://127.0.0.1:${port}`;
  const rows: ReportRow[] = [];
  try {
    await waitForHttp(server, `${url}/health`);
    for (const days of [30, 365]) {
      const range = `startDate=${dateOf(lastDay - days + 1)}&endDate=${dateOf(lastDay)}`;
      for (const report of reports) {
        for (const filters of FILTERS) {
          const target = `${url}/v1/analytics/${report}${report.includes('?') ? '&' : '?'}${range}${filters ? `&${filters}` : ''}`;
          const times: number[] = [];
          let sampled = false;
          for (let i = 0; i < runs + 1; i++) {
            const started = performance.now();
            const res = await fetch(target, { headers: { authorization: `Bearer ${token}` } });
            const body = (await res.json()) as { meta?: { sampled?: boolean } };
            const ms = performance.now() - started;
            if (res.status !== 200) throw new Error(`${target} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
            sampled ||= body.meta?.sampled === true;
            if (i >= 1) times.push(ms);
          }
          times.sort((a, b) => a - b);
          const row = { report, days, filters: filters || '(none)', p50: percentile(times, 50), p95: percentile(times, 95), sampled };
          rows.push(row);
          process.stderr.write(`${JSON.stringify(row)}\n`);
        }
      }
    }
  } finally {
    await stopChild(server);
  }
  return { rows, events, sessions, bytes };
}

export function formatReports(result: Awaited<ReturnType<typeof measureReports>>): string {
  const lines = [
    '',
    `Analytics reports (issue 32): ${result.events.toLocaleString('en')} events, ${result.sessions.toLocaleString('en')} sessions, database ${(result.bytes / 1e6).toFixed(0)} MB; target p95 ≤ 200 ms`,
    '',
    '| report | days | filters | p50 ms | p95 ms | sampled | ≤ 200 ms |',
    '| --- | ---: | --- | ---: | ---: | --- | --- |',
    ...result.rows.map(
      (r) =>
        `| ${r.report} | ${r.days} | ${r.filters} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.sampled ? 'yes' : 'no'} | ${r.p95 <= 200 ? 'yes' : 'NO'} |`,
    ),
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const file = process.argv[2] ?? process.env.ANALYTICS_REPORTS_DB;
  if (!file) {
    process.stderr.write('usage: npx tsx bench/analytics-reports.ts <file.db> (a database filled by bench/analytics-import.ts)\n');
    process.exit(2);
  }
  measureReports(/^postgres(ql)?:/.test(file) ? file : path.resolve(file)).then(
    (result) => {
      // Exit once the table is written: a pipe's write is asynchronous.
      process.stdout.write(`${formatReports(result)}\n`, () => process.exit(0));
    },
    (err) => {
      process.stderr.write(`analytics reports bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
