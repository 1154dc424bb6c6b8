import path from 'node:path';
import Database from 'better-sqlite3';
import { freePort, startChild, stopChild, waitForHttp } from './children.js';
import type { BenchContext } from './endpoints.js';
import { type LoadSettings, type Measurement, measure, type Probe, type Target } from './measure.js';

/** The analytics collector's throughput (issue 31): events a second, and whether every accepted event was stored. */
export interface CollectorRow {
  name: string;
  eventsPerRequest: number;
  result: Measurement;
  eventsPerSec: number;
  /** Events the 202 answers accepted (responses × events a request, warm-up included) and events stored. */
  accepted: number;
  stored: number;
}

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** A tracker's batch of `n` events on the bench site's domain. */
export function collectorTarget(serverUrl: string, ctx: BenchContext, n: number): Target {
  const at = Date.now();
  const events = Array.from({ length: n }, (_, i) =>
    i === 0 ? { t: 'pageview', pv: 'benchpv1', at } : { t: 'engagement', pv: 'benchpv1', at, ms: 1000, sd: 50 },
  );
  return {
    url: `${serverUrl}/v1/public/analytics/events`,
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'x-site-key': ctx.publicKey as string, 'user-agent': CHROME },
    body: JSON.stringify({
      v: 1,
      u: 'https://bench.test/blog/post?utm_source=bench',
      r: 'https://www.google.com/',
      sw: 1440,
      sh: 900,
      lang: 'en',
      sentAt: at,
      events,
    }),
  };
}

function storedEvents(databaseUrl: string, siteId: string): number {
  const db = new Database(databaseUrl, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('select count(*) as n from analytics_events where site_id = ?').get(siteId) as { n: number }).n;
  } finally {
    db.close();
  }
}

/** The stored count once it reaches `expected` or stops growing for two seconds. */
async function drained(databaseUrl: string, siteId: string, expected: number): Promise<number> {
  let count = storedEvents(databaseUrl, siteId);
  let still = 0;
  while (count < expected && still < 8) {
    await new Promise((r) => setTimeout(r, 250));
    const next = storedEvents(databaseUrl, siteId);
    still = next === count ? still + 1 : 0;
    count = next;
  }
  return count;
}

/**
 * Batches of 10 and single events (every request from one address and user agent: one visitor,
 * so the rows measure the collector and its writes, not session lookups), then the bare
 * node:http server (bench/bare-server.mjs, in a process of its own) answering the same POST: the
 * ceiling. After each row, the events the database holds are compared with what was accepted
 * (the queue flushes every 250 ms; the bench waits until the count reaches what was accepted, or
 * has not grown for two seconds: at 12,000 events a second on a busy machine the queue can hold
 * more than a second's writes when the load stops, and a fixed one-second wait counted those in
 * the next row).
 */
export async function measureCollector(
  serverUrl: string,
  databaseUrl: string,
  ctx: BenchContext,
  settings: LoadSettings,
  probe: Probe,
  root: string,
): Promise<CollectorRow[]> {
  const rows: CollectorRow[] = [];
  let before = storedEvents(databaseUrl, ctx.siteId);
  for (const [name, n] of [
    ['collector, batches of 10 events', 10],
    ['collector, single events', 1],
  ] as const) {
    const target = collectorTarget(serverUrl, ctx, n);
    let answered = 0;
    const result = await measure(target, settings, probe, () => answered++);
    const after = await drained(databaseUrl, ctx.siteId, before + answered * n);
    rows.push({ name, eventsPerRequest: n, result, eventsPerSec: result.reqPerSec * n, accepted: answered * n, stored: after - before });
    before = after;
  }
  const port = await freePort();
  const bare = startChild('bare node:http', [path.join(root, 'bench', 'bare-server.mjs')], { ...process.env, PORT: String(port) }, root);
  try {
    await waitForHttp(bare, `http://127.0.0.1:${port}/`);
    const target = collectorTarget(`http://127.0.0.1:${port}`, ctx, 10);
    const result = await measure(target, settings, { serverPid: bare.pid, ourPids: [...probe.ourPids, bare.pid] });
    rows.push({ name: 'bare node:http, the same POST (ceiling)', eventsPerRequest: 10, result, eventsPerSec: result.reqPerSec * 10, accepted: 0, stored: 0 });
  } finally {
    await stopChild(bare);
  }
  return rows;
}

export function formatCollector(rows: readonly CollectorRow[]): string {
  const lines = [
    '| analytics collector | req/s | events/s (target ≥ 5,000 with batches) | p50 / p99 ms | accepted / stored events | non-2xx |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    const stored = r.accepted ? `${r.accepted} / ${r.stored}${r.stored < r.accepted ? ' ✗' : ''}` : '–';
    const miss = r.eventsPerRequest === 10 && r.accepted && r.eventsPerSec < 5000 ? ' ✗' : '';
    lines.push(
      `| ${r.name} | ${r.result.reqPerSec.toFixed(0)} | ${r.eventsPerSec.toFixed(0)}${miss} | ${r.result.p50Ms.toFixed(2)} / ${r.result.p99Ms.toFixed(2)} | ${stored} | ${r.result.non2xx} |`,
    );
  }
  return lines.join('\n');
}
