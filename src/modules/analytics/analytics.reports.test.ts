import { describe, expect, it } from 'vitest';
import { allScopesExcept, createTokenFor } from '../../../test/helpers/app.js';
import { client, expect422 } from '../../../test/helpers/http.js';
import type { SiteClient } from '../../../test/helpers/suite.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { FILTER_DIMS, localMidnight } from './analytics.query.js';
import { readSums } from './analytics.sql.js';
import { rebuildQuietDays } from '../../../test/helpers/analytics.js';
import { dateOfDay } from './analytics.time.js';

/**
 * The reports of decisions A7-A9 on a fixture with hand-computed numbers, in Asia/Kolkata
 * (+5:30: local days are not UTC days). D0 is a local day about 400 days back (inside every
 * retention; its year-earlier dates too). All times below are local.
 *
 * - A (DE, Berlin, desktop, Firefox, Linux, 1920x1080), D0: session A1 10:00 /a (from google,
 *   utm newsletter/spring), 10:05 /b, 10:06 engagement 30 s on /b, 10:10 /a: 3 pageviews, 600 s.
 *   Session A2 10:41 /c (31 minutes later: a new visit), direct: a bounce.
 * - B (IN, Mumbai, mobile, Safari, iOS, 390x844), D0 23:50 /a from t.co (utm twitter/spring),
 *   D1 00:10 /b, 00:12 goal: one visit across local midnight, counted on D0, 1,320 s, a conversion.
 * - C (US, no city, desktop, Chrome, Windows, 1440x900), D2 09:00 /b from blog.example.org, 09:05 /a
 *   (the "late" event in the second scenario): 300 s.
 * - D (DE, desktop), D-2 10:00 /a: a bounce, the previous period's only visit.
 *
 * Totals D0..D2: visitors 2 (D0) + 1 (D2) = 3, visits 4, pageviews 8, bounces 1 (25.0 %),
 * duration 2,220 s / 4 = 555 s, pages per visit 2.00.
 */
const ctx = useTestApp();
const DAY_MS = 86_400_000;
const TZ = 'Asia/Kolkata';
const D0 = Math.floor(Date.now() / DAY_MS) - 400;
const at = (day: number, hh: number, mm: number) => new Date(localMidnight(D0 + day, TZ) + (hh * 60 + mm) * 60_000).toISOString();
const date = (day: number) => dateOfDay(D0 + day);
const RANGE = `startDate=${date(0)}&endDate=${date(2)}`;

const A = { visitorId: 'A', country: 'DE', city: 'Berlin', device: 'desktop', browser: 'Firefox', os: 'Linux', screen: '1920x1080', language: 'de' };
const B = { visitorId: 'B', country: 'IN', city: 'Mumbai', device: 'mobile', browser: 'Safari', os: 'iOS', screen: '390x844', language: 'en' };
const C = { visitorId: 'C', country: 'US', device: 'desktop', browser: 'Chrome', os: 'Windows', screen: '1440x900', language: 'en' };
const D = { visitorId: 'D', country: 'DE', device: 'desktop', browser: 'Firefox', os: 'Linux', screen: '1920x1080', language: 'de' };
const A1 = { ...A, referrer: 'https://www.google.com/search', utmSource: 'newsletter', utmCampaign: 'spring' };
const B1 = { ...B, referrer: 'https://t.co/abc', utmSource: 'twitter', utmCampaign: 'spring' };
const C1 = { ...C, referrer: 'https://blog.example.org/post' };

const FIXTURE = [
  { id: 'a1', ...A1, timestamp: at(0, 10, 0), path: '/a' },
  { id: 'a2', ...A1, timestamp: at(0, 10, 5), path: '/b' },
  { id: 'a3', ...A1, timestamp: at(0, 10, 6), path: '/b', type: 'engagement', engagedMs: 30_000 },
  { id: 'a4', ...A1, timestamp: at(0, 10, 10), path: '/a' },
  { id: 'a5', ...A, timestamp: at(0, 10, 41), path: '/c' },
  { id: 'b1', ...B1, timestamp: at(0, 23, 50), path: '/a' },
  { id: 'b2', ...B1, timestamp: at(1, 0, 10), path: '/b' },
  { id: 'b3', ...B1, timestamp: at(1, 0, 12), path: '/b', type: 'goal', name: 'signup' },
  { id: 'c1', ...C1, timestamp: at(2, 9, 0), path: '/b' },
  { id: 'd1', ...D, timestamp: at(-2, 10, 0), path: '/a' },
];
const LATE = { id: 'c2', ...C1, timestamp: at(2, 9, 5), path: '/a' };

async function importEvents(api: SiteClient, events: object[]) {
  const res = await api.post('/v1/analytics/import', { events });
  expect(res.status).toBe(201);
  expect(res.body.errorCount).toBe(0);
}

async function kolkataSite(): Promise<SiteClient> {
  const api = await ctx.site();
  expect((await api.put('/v1/site/settings', { timezone: TZ })).status).toBe(200);
  return api;
}

/** Rebuilds every dirty day (as the worker would once they are quiet). */
const rebuild = () => rebuildQuietDays(ctx.app, Date.now() + DAY_MS);

const dirtyDays = async (siteId: string) =>
  (await ctx.app.database.db.selectFrom('analytics_days').select('day').where('site_id', '=', siteId).where('dirty', '=', 1).execute()).length;

const ZERO = { visitors: 0, visits: 0, pageviews: 0, bounceRate: 0, avgVisitDuration: 0 };

/** Every report of the fixture, with the numbers computed by hand above. */
async function expectFixtureReports(api: SiteClient) {
  const get = async (url: string) => {
    const res = await api.get(url);
    expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body;
  };
  const meta = (total: number, perPage = 15, currentPage = 1) => ({
    total,
    perPage,
    currentPage,
    lastPage: Math.max(1, Math.ceil(total / perPage)),
    sampled: false,
  });

  expect(await get(`/v1/analytics/overview?${RANGE}&compare=previous`)).toEqual({
    data: {
      visitors: 3,
      visits: 4,
      pageviews: 8,
      bounceRate: 25,
      avgVisitDuration: 555,
      pagesPerSession: 2,
      comparison: { visitors: 1, visits: 1, pageviews: 1, bounceRate: 100, avgVisitDuration: 0, pagesPerSession: 1 },
      change: { visitors: 200, visits: 300, pageviews: 700, bounceRate: -75, avgVisitDuration: null, pagesPerSession: 100 },
    },
    meta: { startDate: date(0), endDate: date(2), compareStartDate: date(-3), compareEndDate: date(-1), sampled: false },
  });
  // A year earlier: nothing, so every change is null.
  const yoy = await get(`/v1/analytics/overview?${RANGE}&compare=yoy`);
  expect(yoy.data.comparison).toEqual({ visitors: 0, visits: 0, pageviews: 0, bounceRate: 0, avgVisitDuration: 0, pagesPerSession: 0 });
  expect(yoy.data.change).toEqual({ visitors: null, visits: null, pageviews: null, bounceRate: null, avgVisitDuration: null, pagesPerSession: null });
  // D0 alone: 3 visits, one bounce: 33.3 %; (600 + 0 + 1,320) / 3 = 640 s.
  expect((await get(`/v1/analytics/overview?startDate=${date(0)}&endDate=${date(0)}`)).data).toMatchObject({
    visitors: 2,
    visits: 3,
    pageviews: 6,
    bounceRate: 33.3,
    avgVisitDuration: 640,
    pagesPerSession: 2,
    comparison: null,
    change: null,
  });

  expect(await get(`/v1/analytics/chart?${RANGE}&compare=previous`)).toEqual({
    data: [
      { date: date(0), visitors: 2, visits: 3, pageviews: 6, bounceRate: 33.3, avgVisitDuration: 640 },
      { date: date(1), ...ZERO },
      { date: date(2), visitors: 1, visits: 1, pageviews: 2, bounceRate: 0, avgVisitDuration: 300 },
    ],
    comparison: [
      { date: date(-3), ...ZERO },
      { date: date(-2), visitors: 1, visits: 1, pageviews: 1, bounceRate: 100, avgVisitDuration: 0 },
      { date: date(-1), ...ZERO },
    ],
    meta: { granularity: 'day', startDate: date(0), endDate: date(2), sampled: false },
  });
  // One day: hours of the local day; A's two visits start in hour 10, B's at 23:50.
  const hourly = await get(`/v1/analytics/chart?startDate=${date(0)}&endDate=${date(0)}`);
  expect(hourly.meta.granularity).toBe('hour');
  expect(hourly.data).toHaveLength(24);
  expect(hourly.data[0]).toEqual({ date: `${date(0)}T00:00`, ...ZERO });
  expect(hourly.data[10]).toEqual({ date: `${date(0)}T10:00`, visitors: 1, visits: 2, pageviews: 4, bounceRate: 50, avgVisitDuration: 300 });
  expect(hourly.data[23]).toEqual({ date: `${date(0)}T23:00`, visitors: 1, visits: 1, pageviews: 2, bounceRate: 0, avgVisitDuration: 1320 });
  expect(hourly.data.filter((p: { visits: number }) => p.visits > 0)).toHaveLength(2);

  expect(await get(`/v1/analytics/pages?${RANGE}`)).toEqual({
    data: [
      { path: '/a', pageviews: 4, visitors: 3, visits: 3, avgTimeOnPage: 0, bounceRate: 0, entries: 2 },
      { path: '/b', pageviews: 3, visitors: 3, visits: 3, avgTimeOnPage: 10, bounceRate: 0, entries: 1 },
      { path: '/c', pageviews: 1, visitors: 1, visits: 1, avgTimeOnPage: 0, bounceRate: 100, entries: 1 },
    ],
    meta: meta(3),
  });

  expect(await get(`/v1/analytics/referrers?${RANGE}`)).toEqual({
    data: [
      { referrer: null, source: 'direct', visitors: 1, visits: 1, bounceRate: 100, percentage: 33.3 },
      { referrer: 'blog.example.org', source: 'other', visitors: 1, visits: 1, bounceRate: 0, percentage: 33.3 },
      { referrer: 'google.com', source: 'search', visitors: 1, visits: 1, bounceRate: 0, percentage: 33.3 },
      { referrer: 't.co', source: 'social', visitors: 1, visits: 1, bounceRate: 0, percentage: 33.3 },
    ],
    meta: meta(4),
    sources: [
      { source: 'direct', visitors: 1, visits: 1, percentage: 33.3 },
      { source: 'search', visitors: 1, visits: 1, percentage: 33.3 },
      { source: 'social', visitors: 1, visits: 1, percentage: 33.3 },
      { source: 'other', visitors: 1, visits: 1, percentage: 33.3 },
    ],
  });

  expect(await get(`/v1/analytics/countries?${RANGE}`)).toEqual({
    data: [
      { country: 'DE', visitors: 1, visits: 2, percentage: 33.3 },
      { country: 'IN', visitors: 1, visits: 1, percentage: 33.3 },
      { country: 'US', visitors: 1, visits: 1, percentage: 33.3 },
    ],
    meta: meta(3),
  });
  expect(await get(`/v1/analytics/cities?${RANGE}&sortBy=visits`)).toEqual({
    data: [
      { city: 'Berlin', country: 'DE', visitors: 1, visits: 2, percentage: 33.3 },
      { city: null, country: 'US', visitors: 1, visits: 1, percentage: 33.3 },
      { city: 'Mumbai', country: 'IN', visitors: 1, visits: 1, percentage: 33.3 },
    ],
    meta: meta(3),
  });
  expect((await get(`/v1/analytics/devices/screens?${RANGE}&sortBy=screen&sortOrder=asc`)).data).toEqual([
    { screen: '1440x900', visitors: 1, visits: 1, percentage: 33.3 },
    { screen: '1920x1080', visitors: 1, visits: 2, percentage: 33.3 },
    { screen: '390x844', visitors: 1, visits: 1, percentage: 33.3 },
  ]);
  expect(await get(`/v1/analytics/devices?${RANGE}&limit=2`)).toEqual({
    data: {
      devices: [
        { device: 'desktop', visitors: 2, percentage: 66.7 },
        { device: 'mobile', visitors: 1, percentage: 33.3 },
      ],
      browsers: [
        { browser: 'Chrome', visitors: 1, percentage: 33.3 },
        { browser: 'Firefox', visitors: 1, percentage: 33.3 },
      ],
      operatingSystems: [
        { os: 'iOS', visitors: 1, percentage: 33.3 },
        { os: 'Linux', visitors: 1, percentage: 33.3 },
      ],
    },
    meta: { sampled: false },
  });

  expect(await get(`/v1/analytics/campaigns?${RANGE}`)).toEqual({
    data: [{ utmCampaign: 'spring', visitors: 2, visits: 2, conversions: 1, conversionRate: 50 }],
    meta: meta(1),
  });
  expect((await get(`/v1/analytics/campaigns?${RANGE}&groupBy=utm_source&groupBy=utm_campaign&sortBy=conversions`)).data).toEqual([
    { utmSource: 'twitter', utmCampaign: 'spring', visitors: 1, visits: 1, conversions: 1, conversionRate: 100 },
    { utmSource: 'newsletter', utmCampaign: 'spring', visitors: 1, visits: 1, conversions: 0, conversionRate: 0 },
  ]);

  // Filters: is (a rollup's rows once rebuilt), is-not, contains, two filters (scans).
  const overview = async (filters: string) => (await get(`/v1/analytics/overview?${RANGE}&${filters}`)).data;
  expect(await overview('country=de')).toMatchObject({ visitors: 1, visits: 2, pageviews: 4, bounceRate: 50, avgVisitDuration: 300, pagesPerSession: 2 });
  expect(await overview('country=!DE')).toMatchObject({ visitors: 2, visits: 2, pageviews: 4, bounceRate: 0, avgVisitDuration: 810, pagesPerSession: 2 });
  expect(await overview('referrer=~CO')).toMatchObject({ visitors: 2, visits: 2, pageviews: 5, bounceRate: 0, avgVisitDuration: 960, pagesPerSession: 2.5 });
  expect(await overview('country=DE&path=/c')).toMatchObject({
    visitors: 1,
    visits: 1,
    pageviews: 1,
    bounceRate: 100,
    avgVisitDuration: 0,
    pagesPerSession: 1,
  });
  expect(await overview('country=IN&country=US')).toMatchObject({ visitors: 2, visits: 2, pageviews: 4 });
  expect(await overview('entry_page=/a&device=mobile')).toMatchObject({ visitors: 1, visits: 1, pageviews: 2, avgVisitDuration: 1320 });
  expect(await overview('traffic_source=search')).toMatchObject({ visitors: 1, visits: 1, pageviews: 3, avgVisitDuration: 600 });
  expect((await get(`/v1/analytics/chart?${RANGE}&country=!DE&browser=~saf`)).data).toEqual([
    { date: date(0), visitors: 1, visits: 1, pageviews: 2, bounceRate: 0, avgVisitDuration: 1320 },
    { date: date(1), ...ZERO },
    { date: date(2), ...ZERO },
  ]);
  expect((await get(`/v1/analytics/pages?${RANGE}&country=DE`)).data).toEqual([
    { path: '/a', pageviews: 2, visitors: 1, visits: 1, avgTimeOnPage: 0, bounceRate: 0, entries: 1 },
    { path: '/b', pageviews: 1, visitors: 1, visits: 1, avgTimeOnPage: 30, bounceRate: null, entries: 0 },
    { path: '/c', pageviews: 1, visitors: 1, visits: 1, avgTimeOnPage: 0, bounceRate: 100, entries: 1 },
  ]);
  expect((await get(`/v1/analytics/pages?${RANGE}&path=/b`)).data).toEqual([
    { path: '/b', pageviews: 3, visitors: 3, visits: 3, avgTimeOnPage: 10, bounceRate: 0, entries: 1 },
  ]);
  // A breakdown filtered on its own dimension: the share is of the filtered visitors.
  expect((await get(`/v1/analytics/countries?${RANGE}&country=DE`)).data).toEqual([{ country: 'DE', visitors: 1, visits: 2, percentage: 100 }]);
  expect((await get(`/v1/analytics/referrers?${RANGE}&country=DE`)).sources).toEqual([
    { source: 'direct', visitors: 1, visits: 1, percentage: 100 },
    { source: 'search', visitors: 1, visits: 1, percentage: 100 },
    { source: 'social', visitors: 0, visits: 0, percentage: 0 },
    { source: 'other', visitors: 0, visits: 0, percentage: 0 },
  ]);

  // Pagination and sorting.
  expect(await get(`/v1/analytics/countries?${RANGE}&limit=2&page=2`)).toEqual({
    data: [{ country: 'US', visitors: 1, visits: 1, percentage: 33.3 }],
    meta: meta(3, 2, 2),
  });
  expect((await get(`/v1/analytics/pages?${RANGE}&sortBy=pageviews&sortOrder=asc`)).data.map((p: { path: string }) => p.path)).toEqual(['/c', '/b', '/a']);
  expect((await get(`/v1/analytics/pages?${RANGE}&sortBy=bounceRate`)).data.map((p: { path: string }) => p.path)).toEqual(['/c', '/a', '/b']);

  expect(await get(`/v1/analytics/filter-values?${RANGE}&dimension=country`)).toEqual({
    data: {
      country: [
        { value: 'DE', visitors: 1 },
        { value: 'IN', visitors: 1 },
        { value: 'US', visitors: 1 },
      ],
    },
    meta: { sampled: false },
  });
  const all = await get(`/v1/analytics/filter-values?${RANGE}&search=i&limit=1`);
  expect(Object.keys(all.data).sort()).toEqual([...FILTER_DIMS].sort());
  expect(all.data.browser).toEqual([{ value: 'Firefox', visitors: 1 }]);
  expect(all.data.traffic_source).toEqual([{ value: 'direct', visitors: 1 }]);
  expect(all.data.utm_campaign).toEqual([{ value: 'spring', visitors: 2 }]);
  expect(all.data.utm_medium).toEqual([]);
}

describe('analytics reports (decisions A7-A9)', () => {
  it('answer the fixture exactly from raw rows, then the same from rebuilt rollups', async () => {
    const api = await kolkataSite();
    await importEvents(api, [...FIXTURE, LATE]);
    // D-2, D0 and D2: B's visit crossing midnight belongs to D0.
    expect(await dirtyDays(api.siteId)).toBe(3);
    await expectFixtureReports(api);
    await rebuild();
    expect(await dirtyDays(api.siteId)).toBe(0);
    await expectFixtureReports(api);
  });

  it('a late event on a finished day is in the next report (rollups plus that day live), and the same after its rebuild', async () => {
    const api = await kolkataSite();
    await importEvents(api, FIXTURE);
    await rebuild();
    await importEvents(api, [LATE]);
    expect(await dirtyDays(api.siteId)).toBe(1);
    await expectFixtureReports(api);
    await rebuild();
    await expectFixtureReports(api);
  });

  it("an empty period answers zeros; another site's events are not counted", async () => {
    const api = await kolkataSite();
    await importEvents(api, FIXTURE);
    const other = await kolkataSite();
    const overview = await other.get(`/v1/analytics/overview?${RANGE}`);
    expect(overview.body.data).toEqual({
      visitors: 0,
      visits: 0,
      pageviews: 0,
      bounceRate: 0,
      avgVisitDuration: 0,
      pagesPerSession: 0,
      comparison: null,
      change: null,
    });
    const chart = await other.get(`/v1/analytics/chart?${RANGE}`);
    expect(chart.body.data).toEqual([0, 1, 2].map((d) => ({ date: date(d), ...ZERO })));
    const months = await other.get(`/v1/analytics/chart?startDate=${date(0)}&endDate=${date(100)}`);
    expect(months.body.meta.granularity).toBe('month');
    expect(months.body.data.length).toBeGreaterThanOrEqual(4);
    expect(months.body.data[0].date).toBe(date(0).slice(0, 7));
    expect((await other.get(`/v1/analytics/referrers?${RANGE}`)).body.sources.map((s: { visitors: number }) => s.visitors)).toEqual([0, 0, 0, 0]);
    expect((await other.get(`/v1/analytics/pages?${RANGE}`)).body).toEqual({
      data: [],
      meta: { total: 0, perPage: 15, currentPage: 1, lastPage: 1, sampled: false },
    });
  });

  it('month buckets sum their days, from rollups and live rows alike', async () => {
    const api = await kolkataSite();
    await importEvents(api, [...FIXTURE, LATE]);
    const monthly = async () => (await api.get(`/v1/analytics/chart?${RANGE}&granularity=month`)).body.data;
    const live = await monthly();
    await rebuild();
    expect(await monthly()).toEqual(live);
    const visits = live.reduce((n: number, p: { visits: number }) => n + p.visits, 0);
    expect(visits).toBe(4);
  });

  it('samples a scan above ANALYTICS_SAMPLE_THRESHOLD and says so; below it nothing is sampled', async () => {
    const api = await kolkataSite();
    await importEvents(api, [...FIXTURE, LATE]);
    const spec = {
      siteId: api.siteId,
      fromDay: D0,
      toDay: D0 + 2,
      filters: [{ dim: 'country' as const, op: 'is_not' as const, values: ['DE'] }],
      group: null,
      bucket: 'none' as const,
    };
    // 4 visits over a threshold of 1: a 1/4 sample (sample = visitor & 63, k a power of two), counts scaled by 4.
    const sampled = await readSums(ctx.app.database.db, { ...spec, sampleThreshold: 1 });
    expect(sampled.sampleRate).toBe(0.25);
    for (const row of sampled.rows) expect(row.visits % 4).toBe(0);
    expect(await readSums(ctx.app.database.db, { ...spec, sampleThreshold: 4 })).toMatchObject({
      sampleRate: 1,
      rows: [{ visitors: 2, visits: 2, pageviews: 4 }],
    });
    // Unfiltered totals come from rollups or live sums, never sampled.
    expect(await readSums(ctx.app.database.db, { ...spec, filters: [], sampleThreshold: 1 })).toMatchObject({ sampleRate: 1, rows: [{ visits: 4 }] });
    expect((await api.get(`/v1/analytics/overview?${RANGE}&country=!DE`)).body.meta).toEqual({ startDate: date(0), endDate: date(2), sampled: false });
  });

  it('an `is` filter on an indexed session column narrows the scan to its rows: exact while they are under the threshold (decisions AR5)', async () => {
    const api = await kolkataSite();
    await importEvents(api, [...FIXTURE, LATE]);
    const db = ctx.app.database.db;
    const DE = { dim: 'country' as const, op: 'is' as const, values: ['DE'] };
    const base = { siteId: api.siteId, fromDay: D0, toDay: D0 + 2, filters: [DE], bucket: 'none' as const };
    const browsers = { ...base, group: ['browser' as const] };
    // 4 visits in the range, 2 of them German (A1, A2): a threshold of 2 reads the 2 exactly, of 1 samples them.
    const exact = await readSums(db, { ...browsers, sampleThreshold: 2 });
    expect(exact.sampleRate).toBe(1);
    expect(exact.rows).toMatchObject([{ visitors: 1, visits: 2, pageviews: 4, bounces: 1, duration_ms: 600_000 }]);
    expect(exact.rows).toEqual((await readSums(db, { ...browsers, sampleThreshold: 1_000_000 })).rows);
    expect((await readSums(db, { ...browsers, sampleThreshold: 1 })).sampleRate).toBe(0.5);
    // Pages read the events of the German sessions: 5 (A1: 3 pageviews and an engagement; A2: 1 pageview) of 10.
    const pagesSpec = { ...base, group: 'page' as const };
    const pages = await readSums(db, { ...pagesSpec, sampleThreshold: 5 });
    expect(pages.sampleRate).toBe(1);
    const byPath = Object.fromEntries(pages.rows.map((r) => [r.keys[0], r]));
    expect(pages.rows.map((r) => [r.pageviews, r.visits, r.bounces, r.engaged_ms]).sort()).toEqual([
      [1, 1, 0, 30_000],
      [1, 1, 1, 0],
      [2, 1, 0, 0],
    ]);
    expect(Object.keys(byPath)).toHaveLength(3);
    expect(pages.rows).toEqual((await readSums(db, { ...pagesSpec, sampleThreshold: 1_000_000 })).rows);
    expect((await readSums(db, { ...pagesSpec, sampleThreshold: 4 })).sampleRate).toBeLessThan(1);
    // A filter that is not `is` narrows nothing: the range's 4 visits decide.
    expect((await readSums(db, { ...browsers, filters: [DE, { dim: 'device', op: 'is_not', values: ['mobile'] }], sampleThreshold: 2 })).sampleRate).toBe(1);
    expect((await readSums(db, { ...browsers, filters: [{ dim: 'country', op: 'contains', values: ['D'] }], sampleThreshold: 2 })).sampleRate).toBe(0.5);
  });
});

describe('analytics report parameters (decisions A8, design 4)', () => {
  it('answers 422 naming the parameter for every rule of the query model', async () => {
    const api = await ctx.site();
    const cases: Array<[string, string, string]> = [
      ['overview?period=2w', 'VALIDATION_FAILED', 'period'],
      ['overview?startDate=2026-02-30&endDate=2026-03-01', 'VALIDATION_FAILED', 'startDate'],
      ['overview?startDate=2026-02-01', 'DATE_RANGE_INVALID', 'endDate'],
      ['overview?endDate=2026-02-01', 'DATE_RANGE_INVALID', 'startDate'],
      ['overview?period=7d&startDate=2026-02-01&endDate=2026-02-02', 'DATE_RANGE_INVALID', 'period'],
      ['overview?startDate=2026-02-03&endDate=2026-02-02', 'DATE_RANGE_INVALID', 'startDate'],
      ['overview?startDate=2010-01-01&endDate=2026-02-02', 'DATE_RANGE_TOO_LONG', 'endDate'],
      ['overview?compare=lastyear', 'VALIDATION_FAILED', 'compare'],
      ['overview?contry=DE', 'VALIDATION_FAILED', 'contry'],
      ['overview?device=phone', 'VALIDATION_FAILED', 'device'],
      ['overview?traffic_source=email', 'VALIDATION_FAILED', 'traffic_source'],
      ['overview?country=Germany', 'VALIDATION_FAILED', 'country'],
      ['overview?path=blog', 'VALIDATION_FAILED', 'path'],
      ['overview?page=2', 'VALIDATION_FAILED', 'page'],
      ['pages?limit=0', 'VALIDATION_FAILED', 'limit'],
      ['pages?limit=101', 'VALIDATION_FAILED', 'limit'],
      ['pages?sortBy=bogus', 'VALIDATION_FAILED', 'sortBy'],
      ['countries?sortOrder=up', 'VALIDATION_FAILED', 'sortOrder'],
      ['chart?period=30d&granularity=hour', 'VALIDATION_FAILED', 'granularity'],
      ['chart?granularity=week', 'VALIDATION_FAILED', 'granularity'],
      ['campaigns?groupBy=utm_nothing', 'VALIDATION_FAILED', 'groupBy[0]'],
      ['filter-values?dimension=colour', 'VALIDATION_FAILED', 'dimension'],
      ['export?type=pageviews', 'VALIDATION_FAILED', 'type'],
    ];
    for (const [url, code, field] of cases) {
      expect422(await api.get(`/v1/analytics/${url}`), code, [field], url);
    }
  });

  it('needs analytics.view for reports and analytics.export for the export', async () => {
    const api = await ctx.site();
    const noView = client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { scopes: allScopesExcept('analytics.view') })).token);
    expect((await noView.get('/v1/analytics/overview')).status).toBe(403);
    expect((await noView.get('/v1/analytics/export')).status).toBe(200);
    const noExport = client(ctx.app, (await createTokenFor(ctx.app, api.siteId, { scopes: allScopesExcept('analytics.export') })).token);
    expect((await noExport.get('/v1/analytics/export')).status).toBe(403);
    expect((await noExport.get('/v1/analytics/pages')).status).toBe(200);
  });
});

describe('analytics export (design 5, decisions F2)', () => {
  it('streams RFC 4180 CSV of events or sessions with filters applied and formula cells neutralised', async () => {
    const api = await kolkataSite();
    await importEvents(api, [
      ...FIXTURE,
      { id: 'x1', ...C, visitorId: 'X', timestamp: at(1, 12, 0), path: '/x', utmCampaign: '=HYPERLINK("http://evil","a,b")' },
    ]);
    const res = await api.get(`/v1/analytics/export?${RANGE}&country=US`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="analytics-events-${date(0)}-${date(2)}.csv"`);
    const lines = res.text.split('\r\n');
    expect(lines[0]).toBe(
      'timestamp,session_id,type,path,referrer,source,utm_source,utm_medium,utm_campaign,utm_term,utm_content,country,city,device,browser,os,language,screen,value,x,y,selector,target,rage,dead',
    );
    expect(lines).toHaveLength(4); // header, x1, c1, and the final CRLF
    expect(lines[1]).toMatch(
      new RegExp(
        `^${at(1, 12, 0).replace(/\./g, '\\.')},\\d+,pageview,/x,,direct,,,"'=HYPERLINK\\(""http://evil"",""a,b""\\)",,,US,,desktop,Chrome,Windows,en,1440x900,,,,,,false,false$`,
      ),
    );
    expect(lines[2]).toMatch(/,pageview,\/b,blog\.example\.org,other,.*,US,,desktop,Chrome,Windows,en,1440x900,,,,,,false,false$/);
    const sessions = await api.get(`/v1/analytics/export?${RANGE}&type=sessions&country=IN`);
    expect(sessions.headers['content-disposition']).toBe(`attachment; filename="analytics-sessions-${date(0)}-${date(2)}.csv"`);
    const rows = sessions.text.split('\r\n');
    expect(rows[0]).toBe(
      'id,startedAt,endedAt,duration,pageviews,events,entryPage,exitPage,bounced,source,referrer,country,city,device,browser,os,screen,language,utmSource,utmMedium,utmCampaign,utmTerm,utmContent,conversions',
    );
    expect(rows[1]).toMatch(
      new RegExp(
        `^\\d+,${at(0, 23, 50).replace(/\./g, '\\.')},${at(1, 0, 12).replace(/\./g, '\\.')},1320,2,3,/a,/b,false,social,t\\.co,IN,Mumbai,mobile,Safari,iOS,390x844,en,twitter,,spring,,,1$`,
      ),
    );
    expect(rows).toHaveLength(3);
  });
});
