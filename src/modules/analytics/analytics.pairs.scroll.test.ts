import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { importAll, rebuildAllDays, zeroVital } from '../../../test/helpers/analytics.js';
import type { SiteClient } from '../../../test/helpers/suite.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import * as m0046 from '../../db/migrations/0046_analytics_pair_scroll_cwv.js';
import { dateOfDay, monthOf } from './analytics.time.js';

/**
 * Scroll depth, Core Web Vitals and forms in the pair rollups (decisions AR8): filtered by `country`
 * and by `country` + `device`, the three reports answer the hand-computed numbers below while every day is
 * dirty (a live scan), after the rebuild (monthly pair rows for the whole month, daily ones for the
 * days around it), after a late visit lands on a finished day (that day live) and after its
 * rebuild, and after migration 0046 on days rebuilt without them (dirty again, then rebuilt).
 *
 * Sessions (imports without pageview ids: a pageview's depth is the deepest engagement of its
 * path in the session), all at noon UTC:
 * - S1 DE mobile, day M+3: /a, engagements on /a at 45 and 80 → 80; LCP 2000, CLS 0.3; form
 *   `contact` started at minute 5, submitted at minute 6 (60 s).
 * - S2 DE desktop, day M+10: /a, engagement 25 → 25; LCP 3000; `contact` started only.
 * - S3 DE mobile, day FIRST (before the month): /a without engagement → 0, /b; LCP 4500;
 *   `newsletter` submitted without a start (a start, no completion time).
 * - S4 FR mobile, day M+3: /a, engagement 100 → 100; LCP 1000.
 * - S5 DE mobile, day LAST (after the month): /a twice, engagement 55 → both 55.
 * - late S6 DE mobile, day M+12: /a, engagement 95 → 95; LCP 2600; `contact` started and submitted 60 s later.
 */
const ctx = useTestApp();
const DAY_MS = 86_400_000;
const TODAY = Math.floor(Date.now() / DAY_MS);
// A whole month well inside raw retention (90 days), with two days on each side.
const MONTH = monthOf(TODAY - 40);
const M = MONTH.first;
const FIRST = M - 2;
const LAST = MONTH.last + 2;
const RANGE = `startDate=${dateOfDay(FIRST)}&endDate=${dateOfDay(LAST)}`;
const noon = (day: number, minute = 0) => new Date(day * DAY_MS + 12 * 3_600_000 + minute * 60_000).toISOString();

let n = 0;
function visit(id: string, day: number, facts: Record<string, string>, steps: Array<Record<string, unknown>>) {
  return steps.map((step, i) => ({ id: `e${n++}`, visitorId: id, sessionId: id, ...facts, timestamp: noon(day, i), ...step }));
}
const pv = (path: string) => ({ type: 'pageview', path });
const scrolled = (path: string, scrollDepth: number) => ({ type: 'engagement', path, engagedMs: 5000, scrollDepth });
const vital = (metric: string, value: number) => ({ type: 'cwv', path: '/a', metric, value });
const form = (type: 'form_start' | 'form_submit', name: string) => ({ type, path: '/a', form: name });
const DE_MOBILE = { country: 'DE', device: 'mobile', browser: 'Safari', os: 'iOS' };

const EVENTS = [
  ...visit('s1', M + 3, DE_MOBILE, [
    pv('/a'),
    scrolled('/a', 45),
    vital('LCP', 2000),
    vital('CLS', 0.3),
    scrolled('/a', 80),
    form('form_start', 'contact'),
    form('form_submit', 'contact'),
  ]),
  ...visit('s2', M + 10, { country: 'DE', device: 'desktop', browser: 'Firefox', os: 'Linux' }, [
    pv('/a'),
    scrolled('/a', 25),
    vital('LCP', 3000),
    form('form_start', 'contact'),
  ]),
  ...visit('s3', FIRST, DE_MOBILE, [pv('/a'), vital('LCP', 4500), pv('/b'), scrolled('/b', 70), form('form_submit', 'newsletter')]),
  ...visit('s4', M + 3, { country: 'FR', device: 'mobile', browser: 'Chrome', os: 'Android' }, [pv('/a'), scrolled('/a', 100), vital('LCP', 1000)]),
  ...visit('s5', LAST, DE_MOBILE, [pv('/a'), pv('/a'), scrolled('/a', 55)]),
];
const LATE = visit('s6', M + 12, DE_MOBILE, [pv('/a'), scrolled('/a', 95), vital('LCP', 2600), form('form_start', 'contact'), form('form_submit', 'contact')]);

const vitals = (lcp: object, cls: object) => [
  { metric: 'LCP', unit: 'ms', ...lcp },
  zeroVital('INP'),
  { metric: 'CLS', unit: 'score', ...cls },
  zeroVital('FCP'),
  zeroVital('TTFB'),
  zeroVital('FID'),
];
const depths = (...percentages: number[]) => percentages.map((percentage, i) => ({ depth: (i + 1) * 10, percentage }));
const CLS_S1 = { p75: 0.3, rating: 'poor', samples: 1, good: 0, needsImprovement: 0, poor: 100 };

const formRow = (form: string, starts: number, submissions: number, abandonmentRate: number, avgCompletionSeconds: number | null) => ({
  form,
  formId: null,
  name: null,
  starts,
  submissions,
  abandonmentRate,
  avgCompletionSeconds,
});

/** The hand-computed answers; `late` with S6. */
function expected(late: boolean) {
  return {
    // DE /a: 80, 25, 0, 55, 55 (+ 95): deciles 8, 2, 0, 5, 5 (+ 9).
    'scroll country=DE': late
      ? { path: '/a', pageviews: 6, averageDepth: 51.7, depths: depths(83.3, 83.3, 66.7, 66.7, 66.7, 33.3, 33.3, 33.3, 16.7, 0) }
      : { path: '/a', pageviews: 5, averageDepth: 43, depths: depths(80, 80, 60, 60, 60, 20, 20, 20, 0, 0) },
    // DE mobile /a: 80, 0, 55, 55 (+ 95).
    'scroll country=DE&device=mobile': late
      ? { path: '/a', pageviews: 5, averageDepth: 57, depths: depths(80, 80, 80, 80, 80, 40, 40, 40, 20, 0) }
      : { path: '/a', pageviews: 4, averageDepth: 47.5, depths: depths(75, 75, 75, 75, 75, 25, 25, 25, 0, 0) },
    'scroll country=FR': { path: '/a', pageviews: 1, averageDepth: 100, depths: depths(100, 100, 100, 100, 100, 100, 100, 100, 100, 100) },
    // DE LCP 2000, 3000, 4500 (+ 2600): p75 the ⌈0.75 n⌉-th.
    'cwv country=DE': vitals(
      late
        ? { p75: 3000, rating: 'needs-improvement', samples: 4, good: 25, needsImprovement: 50, poor: 25 }
        : { p75: 4500, rating: 'poor', samples: 3, good: 33.3, needsImprovement: 33.3, poor: 33.3 },
      CLS_S1,
    ),
    // DE mobile LCP 2000, 4500 (+ 2600).
    'cwv country=DE&device=mobile': vitals(
      late
        ? { p75: 4500, rating: 'poor', samples: 3, good: 33.3, needsImprovement: 33.3, poor: 33.3 }
        : { p75: 4500, rating: 'poor', samples: 2, good: 50, needsImprovement: 0, poor: 50 },
      CLS_S1,
    ),
    // DE: contact started by S1, S2 (+ S6), submitted by S1 (+ S6) 60 s after; newsletter submitted by S3.
    'forms country=DE': [late ? formRow('contact', 3, 2, 33.3, 60) : formRow('contact', 2, 1, 50, 60), formRow('newsletter', 1, 1, 0, null)],
    'forms country=DE&device=mobile': [late ? formRow('contact', 2, 2, 0, 60) : formRow('contact', 1, 1, 0, 60), formRow('newsletter', 1, 1, 0, null)],
    'forms country=FR': [],
    'cwv country=FR&device=mobile': vitals({ p75: 1000, rating: 'good', samples: 1, good: 100, needsImprovement: 0, poor: 0 }, zeroVital('CLS')),
  };
}

async function answers(api: SiteClient) {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(expected(false))) {
    const [report, filters] = key.split(' ') as [string, string];
    const path = { scroll: 'heatmap/scroll?path=/a&', cwv: 'cwv?', forms: 'forms-analytics?' }[report];
    const url = `/v1/analytics/${path}${RANGE}&${filters}`;
    const res = await api.get(url);
    expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200);
    out[key] = res.body.data;
  }
  return out;
}

/** The site's form, scroll and vitals pair rows, daily and monthly, in key order. */
async function pairRows(siteId: string) {
  const of = (table: string, period: string) =>
    sql<Record<string, unknown>>`select fdim, f1, f2, dim, ${sql.ref(period)} as period, v1, v2, visitors, visits, pageviews, duration_ms, events
      from ${sql.table(table)} where site_id = ${siteId} and (dim in ('form', 'scroll') or dim like 'cwv%')
      order by fdim, f1, f2, dim, period, v1, v2`
      .execute(ctx.app.database.db)
      .then((r) => r.rows.map((row) => Object.values(row).map(String).join('|')));
  return { daily: await of('analytics_pair_daily', 'day'), monthly: await of('analytics_pair_monthly', 'month') };
}

describe('scroll depth, vitals and forms in the pair rollups (decisions AR8)', () => {
  it('answer the hand-computed numbers before and after the rebuild, after a late visit on a finished day and after its rebuild', {
    timeout: 120_000,
  }, async () => {
    const db = ctx.app.database.db;
    const api = await ctx.site();
    await importAll(api, EVENTS);
    expect(await answers(api)).toEqual(expected(false));

    await rebuildAllDays(ctx.app);
    // The rebuild wrote the pairs' scroll rows: under country+device, the pageviews of S1, S2 and S4 in the month and S5's two on LAST.
    const { rows } = await sql<{ period: string; pageviews: unknown }>`
      select 'month' as period, sum(pageviews) as pageviews from analytics_pair_monthly
        where site_id = ${api.siteId} and fdim = 'country+device' and dim = 'scroll' and month = ${MONTH.month}
      union all select 'day', sum(pageviews) from analytics_pair_daily
        where site_id = ${api.siteId} and fdim = 'country+device' and dim = 'scroll' and day = ${LAST}`.execute(db);
    expect(rows.map((r) => [r.period, Number(r.pageviews)])).toEqual([
      ['month', 3],
      ['day', 2],
    ]);
    expect(await answers(api)).toEqual(expected(false));

    await importAll(api, LATE);
    expect(await answers(api)).toEqual(expected(true));
    await rebuildAllDays(ctx.app);
    expect(await answers(api)).toEqual(expected(true));

    // Migration 0046 on days rebuilt without these rows (as before it): every day dirty, read live with
    // the same answers, and the rebuild writes the same rows again.
    const rebuilt = await pairRows(api.siteId);
    await m0046.down(db);
    expect(await pairRows(api.siteId)).toEqual({ daily: [], monthly: [] });
    await m0046.up(db);
    expect(await answers(api)).toEqual(expected(true));
    await rebuildAllDays(ctx.app);
    expect(await pairRows(api.siteId)).toEqual(rebuilt);
    expect(await answers(api)).toEqual(expected(true));

    // The answers come from the pair rows: one changed by hand shows (S1's monthly row under DE, decile 8).
    await sql`update analytics_pair_monthly set pageviews = pageviews + 4, duration_ms = duration_ms + 320
      where site_id = ${api.siteId} and fdim = 'country' and dim = 'scroll' and month = ${MONTH.month} and v2 = 8`.execute(db);
    expect((await answers(api))['scroll country=DE']).toMatchObject({ pageviews: 10 });
  });
});
