/**
 * `npx tsx bench/analytics-event-reports.ts`: p50 and p95 of the event reports (issue 32:
 * realtime, engagement, forms, vitals, sessions, timelines, weekday-hour, click heatmap, scroll)
 * over ANALYTICS_BENCH_EVENTS events (default 10,000,000) of one site over 365 days, on the
 * database of DATABASE_URL (default: a fresh SQLite file; a PostgreSQL URL works too), for 30 and
 * 365 days, unfiltered, with one filter and with two. Events go in through the import path
 * (`importEvents`, what `POST /v1/analytics/import` runs, 10,000 a call, without HTTP), then every
 * day's rollups are rebuilt and the reports are asked through `app.inject`, one at a time.
 * ANALYTICS_BENCH_REUSE=<sqlite file> measures a file seeded before (ANALYTICS_BENCH_KEEP=1 keeps it).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createToken } from '../src/modules/api-tokens/api-tokens.service.js';
import { importEvents } from '../src/modules/analytics/analytics.import.js';
import { analyticsOf } from '../src/modules/analytics/analytics.routes.js';
import { rebuildDirtyDays } from '../src/modules/analytics/analytics.tasks.js';
import { createSite } from '../src/modules/sites/sites.service.js';
import { BROWSERS, COUNTRIES, DEVICES, random } from './analytics-data.js';

const TOTAL = Number(process.env.ANALYTICS_BENCH_EVENTS ?? 10_000_000);
const RUNS = Number(process.env.ANALYTICS_BENCH_RUNS ?? 20);
const DAY_MS = 86_400_000;
const log = (line: string) => process.stdout.write(`${line}\n`);

const FORMS = ['contact', 'newsletter', 'signup', 'quote'];
const VITALS: Array<[string, number]> = [
  ['LCP', 5000],
  ['INP', 600],
  ['CLS', 0.4],
  ['FCP', 3500],
  ['TTFB', 2000],
];

/** Sessions of 3-9 events: pageviews with engagement, clicks (some rage or dead), links, forms and vitals. */
function* events(total: number): Generator<Record<string, unknown>> {
  const rnd = random(7);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const end = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const start = end - 365 * DAY_MS;
  let made = 0;
  let session = 0;
  while (made < total) {
    session++;
    let t = start + Math.floor(((made / total) * 365 + rnd() * 0.5) * DAY_MS);
    if (t >= end) t = end - 60_000;
    const facts = {
      visitorId: `v${session >> 1}`,
      sessionId: `s${session}`,
      country: pick(COUNTRIES),
      device: pick(DEVICES),
      browser: pick(BROWSERS),
      os: 'Linux',
    };
    const n = 3 + Math.floor(rnd() * 7);
    let pv = '';
    let path = '';
    for (let e = 0; e < n && made < total; e++) {
      const roll = rnd();
      const event: Record<string, unknown> = { id: `e${made}`, timestamp: new Date(t).toISOString(), ...facts };
      if (e === 0 || roll < 0.3) {
        path = `/page-${Math.floor(rnd() * rnd() * 500)}`;
        pv = `pv${made}`;
        Object.assign(event, { type: 'pageview', pageviewId: pv });
      } else if (roll < 0.5)
        Object.assign(event, { type: 'engagement', pageviewId: pv, engagedMs: Math.floor(rnd() * 60_000), scrollDepth: Math.floor(rnd() * 101) });
      else if (roll < 0.7) {
        const [metric, max] = pick(VITALS);
        Object.assign(event, {
          type: 'cwv',
          pageviewId: pv,
          metric,
          value: metric === 'CLS' ? Math.round(rnd() * max * 1000) / 1000 : Math.round(rnd() * max),
        });
      } else if (roll < 0.88)
        Object.assign(event, {
          type: 'click',
          x: Math.round(rnd() * 10_000) / 10_000,
          y: Math.floor(rnd() * 3000),
          selector: `main > a:nth-of-type(${1 + Math.floor(rnd() * 8)})`,
          rage: rnd() < 0.05,
          dead: rnd() < 0.1,
        });
      else if (roll < 0.92)
        Object.assign(event, { type: rnd() < 0.5 ? 'outbound' : 'download', targetUrl: `https://ext${Math.floor(rnd() * 50)}.example/f.pdf` });
      else Object.assign(event, { type: rnd() < 0.6 ? 'form_start' : 'form_submit', form: pick(FORMS) });
      event.path = path;
      made++;
      t += Math.floor(rnd() * 90_000);
      yield event;
    }
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;

async function main() {
  const reuse = process.env.ANALYTICS_BENCH_REUSE;
  const pg = process.env.DATABASE_URL?.startsWith('postgres');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-analytics-reports-'));
  const databaseUrl = reuse ?? process.env.DATABASE_URL ?? path.join(dir, 'cairn.db');
  const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0', CAIRN_DATA_DIR: dir }, { databaseUrl, worker: { enabled: false, pollMs: 1000 } });
  config.rateLimit = { ...config.rateLimit, max: 100_000_000 };
  const app = await createApp(config, { logger: false });
  await app.ready();
  const db = app.database.db;
  try {
    let siteId: string;
    let userId: string;
    if (reuse) {
      const site = await db.selectFrom('sites').select('id').where('name', '=', 'Event Reports Bench').executeTakeFirstOrThrow();
      siteId = site.id;
      const owner = await db
        .selectFrom('users')
        .select('id')
        .where('site_id', '=', siteId)
        .where('is_owner', '=', true as never)
        .executeTakeFirstOrThrow();
      userId = String(owner.id);
    } else {
      const site = await createSite(db, { name: 'Event Reports Bench', domain: 'bench.test' });
      siteId = site.id;
      userId = site.ownerUserId;
      const { store } = analyticsOf(db);
      const started = performance.now();
      let batch: Array<Record<string, unknown>> = [];
      let imported = 0;
      for (const event of events(TOTAL)) {
        batch.push(event);
        if (batch.length === 10_000) {
          imported += (await importEvents(db, store, siteId, batch, Date.now())).imported;
          batch = [];
          if (imported % 500_000 === 0)
            process.stderr.write(`${imported.toLocaleString('en')} events, ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
        }
      }
      if (batch.length) imported += (await importEvents(db, store, siteId, batch, Date.now())).imported;
      const importSec = (performance.now() - started) / 1000;
      const rebuildStart = performance.now();
      let days = 0;
      for (let n = 1; n > 0; days += n) n = await rebuildDirtyDays(store, Date.now() + DAY_MS, 0);
      log(
        `seeded ${imported.toLocaleString('en')} events in ${importSec.toFixed(0)} s (${(imported / importSec).toFixed(0)}/s); rollups of ${days} days rebuilt in ${((performance.now() - rebuildStart) / 1000).toFixed(0)} s`,
      );
    }
    const { token } = await createToken(db, { siteId, userId, name: 'bench', scopes: 'all' });
    const counts = await sql<{ events: unknown; sessions: unknown }>`select (select count(*) from analytics_events where site_id = ${siteId}) as events,
      (select count(*) from analytics_sessions where site_id = ${siteId}) as sessions`.execute(db);
    const size = pg ? null : ['', '-wal'].reduce((sum, s) => sum + (statSync(databaseUrl + s, { throwIfNoEntry: false })?.size ?? 0), 0);
    log(
      `database: ${pg ? 'PostgreSQL' : 'SQLite'}, ${Number(counts.rows[0]!.events).toLocaleString('en')} events, ${Number(counts.rows[0]!.sessions).toLocaleString('en')} sessions${size === null ? '' : `, file ${(size / 1e9).toFixed(2)} GB`}`,
    );
    const ask = async (url: string) => {
      const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      return res.json();
    };
    const someSession = (await ask('/v1/analytics/sessions?period=7d&limit=1')).data[0]?.id ?? 1;
    const reports = ['engagement', 'forms-analytics', 'cwv', 'sessions', 'sessions/heatmap', 'heatmap?path=/page-1', 'heatmap/scroll?path=/page-1'];
    const filters = { unfiltered: '', '1 filter': 'device=mobile', '2 filters': 'device=mobile&country=US' };
    log('');
    log('| report | period | filters | p50 ms | p95 ms |');
    log('| --- | --- | --- | ---: | ---: |');
    const time = async (url: string) => {
      await ask(url);
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        await ask(url);
        ms.push(performance.now() - t);
      }
      ms.sort((a, b) => a - b);
      return { p50: percentile(ms, 0.5), p95: percentile(ms, 0.95) };
    };
    for (const report of reports)
      for (const period of ['30d', '12m'])
        for (const [label, filter] of Object.entries(filters)) {
          const sep = report.includes('?') ? '&' : '?';
          const { p50, p95 } = await time(
            `/v1/analytics/${report}${sep}${period === '12m' ? 'startDate=' + new Date(Date.now() - 365 * DAY_MS).toISOString().slice(0, 10) + '&endDate=' + new Date().toISOString().slice(0, 10) : 'period=30d'}${filter ? `&${filter}` : ''}`,
          );
          log(`| ${report} | ${period === '12m' ? '365 d' : '30 d'} | ${label} | ${p50.toFixed(1)} | ${p95.toFixed(1)} |`);
        }
    for (const url of ['realtime', 'realtime/pageviews', `sessions/${someSession}`]) {
      const { p50, p95 } = await time(`/v1/analytics/${url}`);
      log(`| ${url.replace(/\d+$/, ':sessionId')} | - | - | ${p50.toFixed(1)} | ${p95.toFixed(1)} |`);
    }
  } finally {
    await app.close();
    if (!reuse && process.env.ANALYTICS_BENCH_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
    else if (!reuse) log(`kept: ${databaseUrl}`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`analytics event reports bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
