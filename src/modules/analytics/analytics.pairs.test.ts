import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { importAll, rebuildAllDays } from '../../../test/helpers/analytics.js';
import type { SiteClient } from '../../../test/helpers/suite.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { localMidnight } from './analytics.query.js';
import { readRollupSums } from './analytics.sql.js';
import { dateOfDay, monthOf } from './analytics.time.js';

/**
 * Pair rollups (decisions AR6): a report filtered by a pair filter answers from
 * `analytics_pair_*` on finished days and live on changed ones, and its answers are exactly the
 * raw path's (a scan of the sessions with the filters as conditions). The raw answers are taken
 * while every day of the range is dirty (then even a pair filter scans), and from a twin site
 * that is never rebuilt. The data: 45 local days (a whole month among them, so monthly pair rows
 * are read) of a few visits a day over three countries, devices and browsers, every event type
 * the paired reports read (forms, vitals and scroll depth too, AR8), and a visitor who changes country within a day (two sessions under one
 * visitor id: why a filter of two values scans).
 */
const ctx = useTestApp();
const DAY_MS = 86_400_000;
const TZ = 'Europe/Berlin';
const TODAY = Math.floor(Date.now() / DAY_MS);
// The first day of the month about two months back: every day within raw retention (90 days).
const D0 = monthOf(TODAY - 62).first;
const FIRST = D0 - 3;
const LAST = D0 + 41;
const RANGE = `startDate=${dateOfDay(FIRST)}&endDate=${dateOfDay(LAST)}`;

function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const COUNTRIES = [{ country: 'DE', city: 'Berlin' }, { country: 'DE', city: 'Hamburg' }, { country: 'FR', city: 'Paris' }, { country: 'US' }];
const DEVICES = [
  { device: 'desktop', browser: 'Firefox', os: 'Linux', screen: '1920x1080' },
  { device: 'mobile', browser: 'Safari', os: 'iOS', screen: '390x844' },
  { device: 'mobile', browser: 'Chrome', os: 'Android', screen: '412x915' },
  { device: 'tablet', browser: 'Safari', os: 'iOS', screen: '820x1180' },
];
const SOURCES = [
  {},
  { referrer: 'https://www.google.com/search' },
  { referrer: 'https://t.co/x', utmSource: 'twitter', utmCampaign: 'spring' },
  { referrer: 'https://blog.example.org/post', utmCampaign: 'fall' },
];
const PATHS = ['/a', '/b', '/c', '/d'];

function fixture(): object[] {
  const rnd = random(7);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const events: object[] = [];
  let n = 0;
  for (let day = FIRST; day <= LAST; day++) {
    const visits = 2 + Math.floor(rnd() * 3);
    for (let v = 0; v < visits; v++) {
      const facts = {
        visitorId: `v${day}-${v % 2}`,
        sessionId: `s${day}-${v}`,
        ...pick(COUNTRIES),
        ...pick(DEVICES),
        ...pick(SOURCES),
        language: pick(['de', 'en']),
      };
      let t = localMidnight(day, TZ) + (8 + v * 3) * 3_600_000 + Math.floor(rnd() * 3_600_000);
      const count = 1 + Math.floor(rnd() * 6);
      for (let e = 0; e < count; e++) {
        const path = pick(PATHS);
        const kind =
          e === 0 ? 'pageview' : pick(['pageview', 'engagement', 'click', 'click', 'outbound', 'download', 'goal', 'form_start', 'form_submit', 'cwv']);
        const event: Record<string, unknown> = { id: `e${n++}`, ...facts, timestamp: new Date(t).toISOString(), path, type: kind };
        if (kind === 'engagement') Object.assign(event, { engagedMs: Math.floor(rnd() * 60_000), scrollDepth: Math.floor(rnd() * 100) });
        if (kind === 'click')
          Object.assign(event, {
            x: Math.floor(rnd() * 100) / 100,
            y: Math.floor(rnd() * 50) * 10,
            selector: pick(['#buy', 'nav a', 'h1']),
            rage: rnd() < 0.3,
            dead: rnd() < 0.3,
          });
        if (kind === 'outbound' || kind === 'download') event.targetUrl = pick(['https://x.example/1', 'https://x.example/file.pdf']);
        if (kind === 'goal') event.name = 'signup';
        if (kind === 'form_start' || kind === 'form_submit') event.form = pick(['contact', 'newsletter']);
        if (kind === 'cwv') {
          const metric = pick(['LCP', 'INP', 'CLS']);
          Object.assign(event, { metric, value: metric === 'CLS' ? Math.floor(rnd() * 400) / 1000 : Math.floor(rnd() * 6000) });
        }
        events.push(event);
        t += 30_000 + Math.floor(rnd() * 120_000);
      }
    }
  }
  return events;
}
const EVENTS = fixture();
// A late pageview on a finished day: a new visit from a German mobile Safari.
const LATE = {
  id: 'late',
  visitorId: 'late',
  sessionId: 'late',
  ...COUNTRIES[0],
  ...DEVICES[1],
  timestamp: new Date(localMidnight(D0 + 10, TZ) + 15 * 3_600_000).toISOString(),
  path: '/b',
};

const FILTERS = [
  'country=DE',
  'device=mobile',
  'traffic_source=search',
  'country=DE&device=mobile',
  // Not pair filters (two values, a pair of columns not stored, a path): scanned on both sides.
  'country=DE&country=FR',
  'country=DE&browser=Safari',
  'country=DE&path=/a',
];
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
  'filter-values',
  'engagement',
  'forms-analytics',
  'sessions/heatmap',
  'sessions?limit=100',
  'heatmap?path=/b',
  // Scroll depth and vitals joined the pair rollups (decisions AR8).
  'heatmap/scroll?path=/b',
  'cwv',
];

async function answers(api: SiteClient): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const report of REPORTS)
    for (const filters of ['', ...FILTERS]) {
      if (report.startsWith('heatmap') && filters.includes('path=')) continue;
      const url = `/v1/analytics/${report}${report.includes('?') ? '&' : '?'}${RANGE}${filters ? `&${filters}` : ''}`;
      const res = await api.get(url);
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200);
      // Session ids differ between the twin sites; everything else is the same.
      out[url.replace(/^.*\/analytics\//, '')] = JSON.parse(JSON.stringify(res.body).replace(/"id":\d+/g, '"id":0'));
    }
  return out;
}

const pick = (r: Record<string, number>) => ({ visitors: r.visitors, visits: r.visits, events: r.events, engaged_ms: r.engaged_ms });

async function berlinSite(): Promise<SiteClient> {
  const api = await ctx.site();
  expect((await api.put('/v1/site/settings', { timezone: TZ })).status).toBe(200);
  return api;
}

describe('pair rollups (decisions AR6)', () => {
  it('answer filtered reports exactly as the raw path: before and after the rebuild, after a late event and after its rebuild', {
    timeout: 300_000,
  }, async () => {
    const db = ctx.app.database.db;
    const api = await berlinSite();
    await importAll(api, EVENTS);
    const DE = { dim: 'country' as const, op: 'is' as const, values: ['DE'] };
    const spec = { siteId: api.siteId, fromDay: FIRST, toDay: LAST, filters: [DE], group: ['browser' as const], bucket: 'none' as const, sampleThreshold: 1e9 };
    // Every day dirty: even a pair filter scans (a rollup read would read them all live).
    expect(await readRollupSums(db, spec)).toBeNull();
    const raw = await answers(api);
    expect(JSON.stringify(raw)).toContain('"visitors":');

    await rebuildAllDays(ctx.app);
    const pairRows = await db
      .selectFrom('analytics_pair_daily')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('site_id', '=', api.siteId)
      .executeTakeFirstOrThrow();
    expect(Number(pairRows.n)).toBeGreaterThan(0);
    // Rebuilt: the pair rollup answers (a read of rollups, not a scan), and every answer is the raw one.
    expect(await readRollupSums(db, spec)).not.toBeNull();
    expect(await readRollupSums(db, { ...spec, filters: [DE, { dim: 'device', op: 'is', values: ['mobile'] }], group: 'page' })).not.toBeNull();
    expect(await answers(api)).toEqual(raw);

    // A late event on a finished day: that day is read live, the others from the pair rollups; a twin site never rebuilt is the raw path.
    await importAll(api, [LATE]);
    const twin = await berlinSite();
    await importAll(twin, [...EVENTS, LATE]);
    expect(await readRollupSums(db, spec)).not.toBeNull();
    const late = await answers(twin);
    expect(late).not.toEqual(raw);
    expect(await answers(api)).toEqual(late);
    await rebuildAllDays(ctx.app);
    expect(await answers(api)).toEqual(late);
    // Months are kept by adding and taking away days: still exactly the sums of their days.
    const monthly = await sql<
      Record<string, unknown>
    >`select fdim, f1, f2, dim, month, v1, v2, visitors, visits, pageviews, bounces, duration_ms, engaged_ms, events, conversions
      from analytics_pair_monthly where site_id = ${api.siteId} order by fdim, f1, f2, dim, month, v1, v2`.execute(db);
    const days = await sql<
      { day: number } & Record<string, unknown>
    >`select fdim, f1, f2, dim, day, v1, v2, visitors, visits, pageviews, bounces, duration_ms, engaged_ms, events, conversions
      from analytics_pair_daily where site_id = ${api.siteId}`.execute(db);
    const summed = new Map<string, Record<string, number>>();
    for (const r of days.rows) {
      const key = [r.fdim, r.f1, r.f2, r.dim, monthOf(Number(r.day)).month, r.v1, r.v2].join('|');
      const row = summed.get(key) ?? summed.set(key, {}).get(key)!;
      for (const m of ['visitors', 'visits', 'pageviews', 'bounces', 'duration_ms', 'engaged_ms', 'events', 'conversions'])
        row[m] = (row[m] ?? 0) + Number(r[m]);
    }
    expect(monthly.rows.length).toBe(summed.size);
    for (const r of monthly.rows) {
      const key = [r.fdim, r.f1, r.f2, r.dim, r.month, r.v1, r.v2].join('|');
      expect({ key, visitors: Number(r.visitors), visits: Number(r.visits), events: Number(r.events), engaged_ms: Number(r.engaged_ms) }).toEqual({
        key,
        ...pick(summed.get(key)!),
      });
    }
  });

  it('a report filtered on the pair rollups reads only rebuilt rows: a pair row changed by hand shows (so the answers above came from them)', {
    timeout: 120_000,
  }, async () => {
    const db = ctx.app.database.db;
    const api = await berlinSite();
    await importAll(api, EVENTS);
    await rebuildAllDays(ctx.app);
    const before = (await api.get(`/v1/analytics/devices?${RANGE}&country=DE`)).body.data.browsers;
    expect(before.length).toBeGreaterThan(0);
    await db
      .updateTable('analytics_pair_daily')
      .set((eb) => ({ visitors: eb('visitors', '+', 1000) }))
      .where('site_id', '=', api.siteId)
      .where('fdim', '=', 'country')
      .where('dim', '=', 'browser')
      // Days outside the range's whole month: read from the daily rows.
      .where('day', '>', monthOf(D0).last)
      .execute();
    const after = (await api.get(`/v1/analytics/devices?${RANGE}&country=DE`)).body.data.browsers;
    expect(
      after.reduce((n: number, r: { visitors: number }) => n + r.visitors, 0) - before.reduce((n: number, r: { visitors: number }) => n + r.visitors, 0),
    ).toBeGreaterThanOrEqual(1000);
  });
});
