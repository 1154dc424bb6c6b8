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
  /** Events the 202 answers of the measured run accepted, per second of its wall time. */
  eventsPerSec: number;
  /** Responses of the measured run per second of its wall time. */
  reqPerSec: number;
  /** Sums of the 202 bodies' `accepted` and `dropped` (warm-up included: its events are stored too). */
  accepted: number;
  dropped: number;
  /** 429 answers (a rate limit), and other answers that are neither 202 nor 429. */
  rateLimited: number;
  otherStatuses: number;
  /** Events the database holds for the site after the writer drained, minus those before the row. */
  stored: number;
  /**
   * Events of the requests autocannon sent but stopped waiting for at the end of a run (warm-up
   * and measured: at most one a connection each): the server accepted them, the bench saw no
   * answer. Nothing accepted is lost, and nothing counted twice, when accepted ≤ stored ≤ accepted + these.
   */
  unansweredEvents: number;
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

/**
 * The stored count once the collector's writer has drained: a realtime read flushes the queue and
 * waits for the write (decisions AR3), so what the 202 answers accepted is either stored by then
 * or lost; no waiting for the count to settle.
 */
async function drained(serverUrl: string, databaseUrl: string, ctx: BenchContext): Promise<number> {
  const res = await fetch(`${serverUrl}/v1/analytics/realtime`, { headers: { authorization: `Bearer ${ctx.token}` } });
  if (res.status !== 200) throw new Error(`draining the collector through GET /v1/analytics/realtime: ${res.status} ${await res.text()}`);
  return storedEvents(databaseUrl, ctx.siteId);
}

/**
 * Batches of 10 and single events (every request from one address and user agent: one visitor,
 * so the rows measure the collector and its writes, not session lookups), then the bare
 * node:http server (bench/bare-server.mjs, in a process of its own) answering the same POST: the
 * ceiling. "Nothing dropped" is counted, not assumed: the `accepted` and `dropped` of every 202
 * body are summed (warm-up included), 429s and other statuses counted apart, the writer drained,
 * and the rows stored compared with the events accepted. Rates are the measured run's accepted
 * events and responses over its wall time, so a stall shows in them.
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
  let before = await drained(serverUrl, databaseUrl, ctx);
  for (const [name, n] of [
    ['collector, batches of 10 events', 10],
    ['collector, single events', 1],
  ] as const) {
    const target = collectorTarget(serverUrl, ctx, n);
    const counts = { accepted: 0, dropped: 0, measuredAccepted: 0, rateLimited: 0, otherStatuses: 0 };
    const result = await measure(target, settings, probe, undefined, (status, body, measured) => {
      if (status === 202) {
        const answer = JSON.parse(body) as { accepted: number; dropped: number };
        counts.accepted += answer.accepted;
        counts.dropped += answer.dropped;
        if (measured) counts.measuredAccepted += answer.accepted;
      } else if (status === 429) counts.rateLimited++;
      else counts.otherStatuses++;
    });
    const after = await drained(serverUrl, databaseUrl, ctx);
    rows.push({
      name,
      eventsPerRequest: n,
      result,
      eventsPerSec: counts.measuredAccepted / result.elapsedSec,
      reqPerSec: result.responses / result.elapsedSec,
      accepted: counts.accepted,
      dropped: counts.dropped,
      rateLimited: counts.rateLimited,
      otherStatuses: counts.otherStatuses,
      stored: after - before,
      unansweredEvents: result.unanswered * n,
    });
    before = after;
  }
  const port = await freePort();
  const bare = startChild('bare node:http', [path.join(root, 'bench', 'bare-server.mjs')], { ...process.env, PORT: String(port) }, root);
  try {
    await waitForHttp(bare, `http://127.0.0.1:${port}/`);
    const target = collectorTarget(`http://127.0.0.1:${port}`, ctx, 10);
    const result = await measure(target, settings, { serverPid: bare.pid, ourPids: [...probe.ourPids, bare.pid] });
    rows.push({
      name: 'bare node:http, the same POST (ceiling)',
      eventsPerRequest: 10,
      result,
      eventsPerSec: (result.responses * 10) / result.elapsedSec,
      reqPerSec: result.responses / result.elapsedSec,
      accepted: 0,
      dropped: 0,
      rateLimited: 0,
      otherStatuses: result.non2xx,
      stored: 0,
      unansweredEvents: 0,
    });
  } finally {
    await stopChild(bare);
  }
  return rows;
}

export function formatCollector(rows: readonly CollectorRow[]): string {
  const lines = [
    '| analytics collector | req/s | events/s (target ≥ 5,000 with batches) | p50 / p99 ms | accepted (+ unanswered at the stop) / stored events | dropped | 429 | other non-2xx, errors, timeouts |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    const ceiling = r.name.startsWith('bare');
    const stored = ceiling
      ? '–'
      : `${r.accepted} (+ ${r.unansweredEvents}) / ${r.stored}${r.stored < r.accepted || r.stored > r.accepted + r.unansweredEvents ? ' ✗' : ''}`;
    const miss = !ceiling && r.eventsPerRequest === 10 && r.eventsPerSec < 5000 ? ' ✗' : '';
    lines.push(
      `| ${r.name} | ${r.reqPerSec.toFixed(0)} | ${r.eventsPerSec.toFixed(0)}${miss} | ${r.result.p50Ms.toFixed(2)} / ${r.result.p99Ms.toFixed(2)} | ${stored} | ${ceiling ? '–' : r.dropped} | ${ceiling ? '–' : r.rateLimited} | ${r.otherStatuses}, ${r.result.errors}, ${r.result.timeouts} |`,
    );
  }
  return lines.join('\n');
}
