import { describe, expect, it } from 'vitest';
import { expect422, expectErrorShape } from '../../../test/helpers/http.js';
import type { SiteClient } from '../../../test/helpers/suite.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { rebuildQuietDays, zeroVital } from '../../../test/helpers/analytics.js';
import { localTime } from './analytics.time.js';

/**
 * The event reports (design 5) on imported events with fixed local times in an Asia/Kolkata site
 * (+5:30, so local days are not UTC days): every number below is worked out by hand from the
 * fixture. Each report is asked while its days are dirty (live sums), after the rollups were
 * rebuilt (daily rows, and monthly rows for a whole month), and after a late event lands on a
 * finished day.
 */
const ctx = useTestApp();
const DAY_MS = 86_400_000;
const TZ = 'Asia/Kolkata';

const dateOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
/** The 10th of last month (local): inside raw retention (90 days) and a whole month to ask for. */
const today = localTime(Date.now(), TZ);
const lastMonth = new Date(Date.UTC(Number(today.date.slice(0, 4)), Number(today.date.slice(5, 7)) - 2, 1));
const D = Math.round(lastMonth.getTime() / DAY_MS) + 9;
const d0 = dateOf(D);
const d1 = dateOf(D + 1);
const monthFirst = dateOf(Math.round(lastMonth.getTime() / DAY_MS));
const monthLast = dateOf(Math.round(Date.UTC(lastMonth.getUTCFullYear(), lastMonth.getUTCMonth() + 1, 0) / DAY_MS));
const at = (date: string, time: string) => `${date}T${time}+05:30`;
const utc = (date: string, time: string) => new Date(at(date, time)).toISOString();
/** ISO weekday (1 = Monday) of a local day. */
const weekdayOf = (day: number) => ((day + 3) % 7) + 1;

const A = {
  visitorId: 'A',
  sessionId: 'a1',
  device: 'desktop',
  country: 'IN',
  city: 'Mumbai',
  browser: 'Chrome',
  os: 'Windows',
  screen: '1920x1080',
  language: 'en-IN',
  referrer: 'https://www.google.com/',
};
const B = { visitorId: 'B', sessionId: 'b1', device: 'mobile', country: 'US', city: 'New York', browser: 'Safari', os: 'iOS', referrer: 'https://t.co/x' };
const C = { visitorId: 'C', sessionId: 'c1', device: 'desktop', country: 'DE', city: 'Berlin', browser: 'Chromium', os: 'Linux', utmCampaign: 'launch' };

const FIXTURE = [
  // A: 23:50 on D to 00:01 on D+1 (counts on D, 660 s), one pageview, a rage and a dead click, an outbound link, contact form completed in 600 s.
  { ...A, id: 'a-1', timestamp: at(d0, '23:50:00'), type: 'pageview', path: '/pricing', pageviewId: 'pva1' },
  { ...A, id: 'a-2', timestamp: at(d0, '23:50:30'), type: 'cwv', path: '/pricing', pageviewId: 'pva1', metric: 'LCP', value: 1200 },
  { ...A, id: 'a-3', timestamp: at(d0, '23:51:00'), type: 'form_start', path: '/pricing', form: 'contact' },
  { ...A, id: 'a-4', timestamp: at(d0, '23:51:30'), type: 'click', path: '/pricing', x: 0.5012, y: 1234, selector: 'button.buy', rage: true },
  { ...A, id: 'a-5', timestamp: at(d0, '23:52:00'), type: 'click', path: '/pricing', x: 0.5049, y: 1232, selector: 'button.buy', dead: true },
  { ...A, id: 'a-6', timestamp: at(d0, '23:53:00'), type: 'outbound', path: '/pricing', targetUrl: 'https://ext.example/a' },
  { ...A, id: 'a-7', timestamp: at(d0, '23:55:00'), type: 'engagement', path: '/pricing', pageviewId: 'pva1', engagedMs: 30000, scrollDepth: 75 },
  { ...A, id: 'a-8', timestamp: at(d1, '00:01:00'), type: 'form_submit', path: '/pricing', form: 'contact' },
  // B: 10:00-10:05 on D (300 s), mobile; contact form started, not submitted; a download.
  { ...B, id: 'b-1', timestamp: at(d0, '10:00:00'), type: 'pageview', path: '/pricing', pageviewId: 'pvb1' },
  { ...B, id: 'b-2', timestamp: at(d0, '10:00:10'), type: 'cwv', path: '/pricing', pageviewId: 'pvb1', metric: 'LCP', value: 2600 },
  { ...B, id: 'b-3', timestamp: at(d0, '10:00:20'), type: 'cwv', path: '/pricing', pageviewId: 'pvb1', metric: 'CLS', value: 0.05 },
  { ...B, id: 'b-4', timestamp: at(d0, '10:01:00'), type: 'form_start', path: '/pricing', form: 'contact' },
  { ...B, id: 'b-5', timestamp: at(d0, '10:02:00'), type: 'click', path: '/pricing', x: 0.2, y: 100, selector: 'a.nav' },
  { ...B, id: 'b-6', timestamp: at(d0, '10:03:00'), type: 'download', path: '/pricing', targetUrl: 'https://example.test/files/x.pdf' },
  { ...B, id: 'b-7', timestamp: at(d0, '10:05:00'), type: 'engagement', path: '/pricing', pageviewId: 'pvb1', engagedMs: 20000, scrollDepth: 35 },
  // C: 09:00-09:00:40 on D+1 (40 s), two pageviews without engagement, newsletter completed in 30 s.
  { ...C, id: 'c-1', timestamp: at(d1, '09:00:00'), type: 'pageview', path: '/home', pageviewId: 'pvc1' },
  { ...C, id: 'c-2', timestamp: at(d1, '09:00:05'), type: 'cwv', path: '/home', pageviewId: 'pvc1', metric: 'LCP', value: 4100 },
  { ...C, id: 'c-3', timestamp: at(d1, '09:00:06'), type: 'cwv', path: '/home', pageviewId: 'pvc1', metric: 'LCP', value: 1800 },
  { ...C, id: 'c-4', timestamp: at(d1, '09:00:10'), type: 'form_start', path: '/home', form: 'newsletter' },
  { ...C, id: 'c-5', timestamp: at(d1, '09:00:20'), type: 'pageview', path: '/pricing', pageviewId: 'pvc2' },
  { ...C, id: 'c-6', timestamp: at(d1, '09:00:40'), type: 'form_submit', path: '/pricing', form: 'newsletter' },
];

async function fixtureSite(): Promise<SiteClient & { formId: number }> {
  const api = await ctx.site();
  expect((await api.put('/v1/site/settings', { timezone: TZ })).status).toBe(200);
  const form = await api.post('/v1/forms', { name: 'Contact us', slug: 'contact', schema: [{ name: 'email', type: 'email', label: 'E-mail' }] });
  expect(form.status, JSON.stringify(form.body)).toBe(201);
  const res = await api.post('/v1/analytics/import', { events: FIXTURE });
  expect(res.body).toEqual({ imported: FIXTURE.length, skipped: 0, errors: [], errorCount: 0 });
  return Object.assign(api, { formId: form.body.data.id as number });
}

const days = `startDate=${d0}&endDate=${d1}`;
const month = `startDate=${monthFirst}&endDate=${monthLast}`;
const rebuild = () => rebuildQuietDays(ctx.app);
const get = async (api: SiteClient, url: string) => {
  const res = await api.get(url);
  expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

/** Every rollup-backed report of the fixture, with its hand-computed answer; `late` adds the late rage click. */
function expectations(formId: number, late: boolean) {
  const rage = late ? 2 : 1;
  return {
    engagement: {
      rageClicks: rage,
      deadClicks: 1,
      outboundClicks: 1,
      fileDownloads: 1,
      rageElements: [{ path: '/pricing', selector: 'button.buy', clicks: rage, sessions: 1 }],
      deadElements: [{ path: '/pricing', selector: 'button.buy', clicks: 1, sessions: 1 }],
      outboundLinks: [{ url: 'https://ext.example/a', clicks: 1, visitors: 1 }],
      downloads: [{ url: 'https://example.test/files/x.pdf', clicks: 1, visitors: 1 }],
    },
    forms: [
      { form: 'contact', formId, name: 'Contact us', starts: 2, submissions: 1, abandonmentRate: 50, avgCompletionSeconds: 600 },
      { form: 'newsletter', formId: null, name: null, starts: 1, submissions: 1, abandonmentRate: 0, avgCompletionSeconds: 30 },
    ],
    cwv: [
      { metric: 'LCP', unit: 'ms', p75: 2600, rating: 'needs-improvement', samples: 4, good: 50, needsImprovement: 25, poor: 25 },
      zeroVital('INP'),
      { metric: 'CLS', unit: 'score', p75: 0.05, rating: 'good', samples: 1, good: 100, needsImprovement: 0, poor: 0 },
      zeroVital('FCP'),
      zeroVital('TTFB'),
      zeroVital('FID'),
    ],
    weekdayHours: new Map([
      [`${weekdayOf(D)}/23`, 1],
      [`${weekdayOf(D)}/10`, 1],
      [`${weekdayOf(D + 1)}/9`, 1],
    ]),
    scroll: {
      path: '/pricing',
      pageviews: 3,
      // (75 + 35 + 0) / 3 = 36.67; C's second pageview sent no engagement (depth 0).
      averageDepth: 36.7,
      depths: [66.7, 66.7, 66.7, 33.3, 33.3, 33.3, 33.3, 0, 0, 0].map((percentage, i) => ({ depth: (i + 1) * 10, percentage })),
    },
  };
}

async function expectRollupReports(api: SiteClient & { formId: number }, range: string, late: boolean) {
  const want = expectations(api.formId, late);
  expect((await get(api, `/v1/analytics/engagement?${range}`)).data).toEqual(want.engagement);
  const forms = await get(api, `/v1/analytics/forms-analytics?${range}`);
  expect(forms).toEqual({ data: want.forms, meta: { total: 2, perPage: 15, currentPage: 1, lastPage: 1 } });
  expect((await get(api, `/v1/analytics/cwv?${range}`)).data).toEqual(want.cwv);
  const cells = (await get(api, `/v1/analytics/sessions/heatmap?${range}`)).data;
  expect(cells).toHaveLength(168);
  expect(cells.slice(0, 2)).toEqual([
    { weekday: 1, hour: 0, sessions: want.weekdayHours.get('1/0') ?? 0 },
    { weekday: 1, hour: 1, sessions: want.weekdayHours.get('1/1') ?? 0 },
  ]);
  for (const c of cells) expect(c.sessions, `${c.weekday}/${c.hour}`).toBe(want.weekdayHours.get(`${c.weekday}/${c.hour}`) ?? 0);
  const scroll = await get(api, `/v1/analytics/heatmap/scroll?${range}&path=/pricing`);
  expect(scroll.data).toEqual(want.scroll);
  expect(scroll.meta).toEqual({ rawDataFrom: dateOf(today.day - 90) });
}

describe('analytics event reports (design 5) on an Asia/Kolkata fixture', () => {
  it('answers every rollup-backed report exactly: live while dirty, from daily and monthly rollups once rebuilt, and again after a late event', async () => {
    const api = await fixtureSite();
    const site = api.siteId;
    const dirty = async () =>
      Number(
        (
          await ctx.app.database.db
            .selectFrom('analytics_days')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('site_id', '=', site)
            .where('dirty', '=', 1)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await dirty()).toBe(2);
    await expectRollupReports(api, days, false);
    await expectRollupReports(api, month, false);

    await rebuild();
    expect(await dirty()).toBe(0);
    const rows = await ctx.app.database.db
      .selectFrom('analytics_daily')
      .select('dim')
      .distinct()
      .where('site_id', '=', site)
      .where('dim', 'in', ['weekday_hour', 'outbound', 'download', 'rage', 'dead', 'form', 'scroll', 'cwv_LCP', 'cwv_CLS'])
      .orderBy('dim')
      .execute();
    expect(rows.map((r) => r.dim)).toEqual(['cwv_CLS', 'cwv_LCP', 'dead', 'download', 'form', 'outbound', 'rage', 'scroll', 'weekday_hour']);
    await expectRollupReports(api, days, false);
    await expectRollupReports(api, month, false);

    // A late rage click on D (a finished day): D is dirty again, and every answer includes it at once.
    const late = { ...A, id: 'a-late', timestamp: at(d0, '23:56:00'), type: 'click', path: '/pricing', x: 0.9, y: 10, selector: 'button.buy', rage: true };
    expect((await api.post('/v1/analytics/import', { events: [late] })).body.imported).toBe(1);
    expect(await dirty()).toBe(1);
    await expectRollupReports(api, days, true);
    await expectRollupReports(api, month, true);
    await rebuild();
    await expectRollupReports(api, days, true);
    await expectRollupReports(api, month, true);
    // Days outside the range count nothing.
    const before = `startDate=${dateOf(D - 5)}&endDate=${dateOf(D - 1)}`;
    expect((await get(api, `/v1/analytics/engagement?${before}`)).data.rageClicks).toBe(0);
    expect((await get(api, `/v1/analytics/cwv?${before}`)).data[0]).toEqual(zeroVital('LCP'));
  });

  it('filters the event reports: is, is-not, contains, two filters, path on the page of the event', async () => {
    const api = await fixtureSite();
    const engagement = async (f: string) => (await get(api, `/v1/analytics/engagement?${days}&${f}`)).data;
    expect(await engagement('device=mobile')).toMatchObject({ rageClicks: 0, deadClicks: 0, outboundClicks: 0, fileDownloads: 1, rageElements: [] });
    expect(await engagement('path=/home')).toMatchObject({ rageClicks: 0, deadClicks: 0, outboundClicks: 0, fileDownloads: 0 });
    expect(await engagement('path=/pricing')).toMatchObject({ rageClicks: 1, deadClicks: 1, outboundClicks: 1, fileDownloads: 1 });
    expect(await engagement('country=in')).toMatchObject({ rageClicks: 1, outboundClicks: 1, fileDownloads: 0 });

    const lcp = async (f: string) => (await get(api, `/v1/analytics/cwv?${days}&${f}`)).data[0];
    expect(await lcp('device=mobile')).toEqual({
      metric: 'LCP',
      unit: 'ms',
      p75: 2600,
      rating: 'needs-improvement',
      samples: 1,
      good: 0,
      needsImprovement: 100,
      poor: 0,
    });
    // B and C: 1800, 2600, 4100 → rank ⌈0.75 × 3⌉ = 3 → 4100.
    expect(await lcp('country=!IN')).toEqual({
      metric: 'LCP',
      unit: 'ms',
      p75: 4100,
      rating: 'poor',
      samples: 3,
      good: 33.3,
      needsImprovement: 33.3,
      poor: 33.3,
    });
    expect(await lcp('browser=~CHROM')).toMatchObject({ p75: 4100, samples: 3 });
    expect(await lcp('browser=~chrom&device=desktop&country=DE')).toMatchObject({ p75: 4100, samples: 2, good: 50, poor: 50 });
    expect(await lcp('country=FR')).toEqual(zeroVital('LCP'));

    const forms = async (f: string) => (await get(api, `/v1/analytics/forms-analytics?${days}&${f}`)).data.map((r: any) => [r.form, r.starts, r.submissions]);
    expect(await forms('device=mobile')).toEqual([['contact', 1, 0]]);
    expect(await forms('traffic_source=direct')).toEqual([['newsletter', 1, 1]]);
    expect(await forms('traffic_source=search&traffic_source=social')).toEqual([['contact', 2, 1]]);

    const cells = async (f: string) =>
      (await get(api, `/v1/analytics/sessions/heatmap?${days}&${f}`)).data.filter((c: any) => c.sessions).map((c: any) => [c.weekday, c.hour, c.sessions]);
    expect(await cells('country=DE')).toEqual([[weekdayOf(D + 1), 9, 1]]);
    // On sessions, path keeps those that viewed the page.
    expect(await cells('path=/home')).toEqual([[weekdayOf(D + 1), 9, 1]]);
    expect((await cells('path=!/home')).length).toBe(2);

    const scroll = await get(api, `/v1/analytics/heatmap/scroll?${days}&path=/pricing&device=desktop`);
    // A (75) and C's second pageview (0).
    expect(scroll.data).toMatchObject({ pageviews: 2, averageDepth: 37.5 });
    expect(scroll.data.depths.map((d: any) => d.percentage)).toEqual([50, 50, 50, 50, 50, 50, 50, 0, 0, 0]);
  });

  it('sorts and pages forms analytics; an unknown sortBy, a misspelt parameter or a bad filter value is a 422', async () => {
    const api = await fixtureSite();
    const forms = async (q: string) => get(api, `/v1/analytics/forms-analytics?${days}&${q}`);
    expect((await forms('sortBy=abandonmentRate&sortOrder=asc')).data.map((r: any) => r.form)).toEqual(['newsletter', 'contact']);
    expect((await forms('sortBy=submissions&sortOrder=desc')).data.map((r: any) => r.form)).toEqual(['contact', 'newsletter']);
    const paged = await forms('limit=1&page=2');
    expect(paged).toMatchObject({ data: [{ form: 'newsletter' }], meta: { total: 2, perPage: 1, currentPage: 2, lastPage: 2 } });
    for (const [url, field] of [
      [`/v1/analytics/forms-analytics?${days}&sortBy=visitors`, 'sortBy'],
      [`/v1/analytics/sessions?${days}&sortBy=path`, 'sortBy'],
      [`/v1/analytics/sessions?${days}&limit=101`, 'limit'],
      [`/v1/analytics/cwv?${days}&contry=DE`, 'contry'],
      [`/v1/analytics/engagement?${days}&device=fridge`, 'device'],
      [`/v1/analytics/heatmap?${days}`, 'path'],
      [`/v1/analytics/heatmap/scroll?${days}`, 'path'],
      [`/v1/analytics/heatmap?${days}&path=~/pri`, 'path'],
      [`/v1/analytics/heatmap?${days}&path=/a&path=/b`, 'path'],
      [`/v1/analytics/sessions/heatmap?period=2d`, 'period'],
    ] as const) {
      const res = await api.get(url);
      expect422(res, 'VALIDATION_FAILED', [field], url);
    }
  });

  it('lists sessions with every field, sorted, paged and filtered, and shows a timeline; another site, an unknown id and a session past retention are one 404', async () => {
    const api = await fixtureSite();
    const list = await get(api, `/v1/analytics/sessions?${days}`);
    expect(list.meta).toEqual({ total: 3, perPage: 15, currentPage: 1, lastPage: 1, rawDataFrom: dateOf(today.day - 90) });
    const [c1, a1, b1] = list.data;
    expect(a1).toEqual({
      id: a1.id,
      startedAt: utc(d0, '23:50:00'),
      endedAt: utc(d1, '00:01:00'),
      duration: 660,
      pageviews: 1,
      events: 8,
      entryPage: '/pricing',
      exitPage: '/pricing',
      bounced: false,
      source: 'search',
      referrer: 'google.com',
      country: 'IN',
      city: 'Mumbai',
      device: 'desktop',
      browser: 'Chrome',
      os: 'Windows',
      screen: '1920x1080',
      language: 'en-IN',
      utmSource: null,
      utmMedium: null,
      utmCampaign: null,
      conversions: 1,
    });
    expect(b1).toMatchObject({
      startedAt: utc(d0, '10:00:00'),
      duration: 300,
      pageviews: 1,
      events: 7,
      source: 'social',
      referrer: 't.co',
      device: 'mobile',
      conversions: 0,
    });
    expect(c1).toMatchObject({
      startedAt: utc(d1, '09:00:00'),
      duration: 40,
      pageviews: 2,
      events: 6,
      entryPage: '/home',
      exitPage: '/pricing',
      source: 'direct',
      utmCampaign: 'launch',
    });
    const ids = async (q: string) => (await get(api, `/v1/analytics/sessions?${days}&${q}`)).data.map((s: any) => s.id);
    expect(await ids('sortBy=duration')).toEqual([a1.id, b1.id, c1.id]);
    expect(await ids('sortBy=duration&sortOrder=asc')).toEqual([c1.id, b1.id, a1.id]);
    expect(await ids('sortBy=pageviews&sortOrder=desc')).toEqual([c1.id, a1.id, b1.id]);
    expect(await ids('sortBy=startedAt&sortOrder=asc')).toEqual([b1.id, a1.id, c1.id]);
    const paged = await get(api, `/v1/analytics/sessions?${days}&limit=2&page=2`);
    expect(paged.data.map((s: any) => s.id)).toEqual([b1.id]);
    expect(paged.meta).toMatchObject({ total: 3, perPage: 2, currentPage: 2, lastPage: 2 });
    expect(await ids('country=IN')).toEqual([a1.id]);
    expect(await ids('device=!desktop')).toEqual([b1.id]);
    expect(await ids('browser=~chrom')).toEqual([c1.id, a1.id]);
    // Values of one name OR, also an exact value with a contains.
    expect(await ids('browser=Safari&browser=~chromium')).toEqual([c1.id, b1.id]);
    expect(await ids('path=/home')).toEqual([c1.id]);
    expect(await ids('entry_page=/pricing&city=Mumbai')).toEqual([a1.id]);
    expect(await ids('utm_campaign=launch&referrer=google.com')).toEqual([]);
    expect((await get(api, `/v1/analytics/sessions?startDate=${d1}&endDate=${d1}`)).data.map((s: any) => s.id)).toEqual([c1.id]);

    const timeline = await get(api, `/v1/analytics/sessions/${a1.id}`);
    expect(timeline.meta).toEqual({ rawDataFrom: dateOf(today.day - 90) });
    expect(timeline.data.session).toEqual(a1);
    expect(timeline.data.events).toEqual([
      { type: 'pageview', timestamp: utc(d0, '23:50:00'), path: '/pricing' },
      { type: 'cwv', timestamp: utc(d0, '23:50:30'), path: '/pricing', metric: 'LCP', value: 1200 },
      { type: 'form_start', timestamp: utc(d0, '23:51:00'), path: '/pricing', form: 'contact' },
      { type: 'click', timestamp: utc(d0, '23:51:30'), path: '/pricing', selector: 'button.buy', x: 0.5012, y: 1234, rage: true, dead: false },
      { type: 'click', timestamp: utc(d0, '23:52:00'), path: '/pricing', selector: 'button.buy', x: 0.5049, y: 1232, rage: false, dead: true },
      { type: 'outbound', timestamp: utc(d0, '23:53:00'), path: '/pricing', url: 'https://ext.example/a' },
      { type: 'engagement', timestamp: utc(d0, '23:55:00'), path: '/pricing', engagedSeconds: 30, scrollDepth: 75 },
      { type: 'form_submit', timestamp: utc(d1, '00:01:00'), path: '/pricing', form: 'contact' },
    ]);

    const other = await fixtureSite();
    const foreign = await other.get(`/v1/analytics/sessions/${a1.id}`);
    const unknown = await api.get(`/v1/analytics/sessions/${c1.id + 1_000_000}`);
    expect(foreign.status).toBe(404);
    expectErrorShape(foreign.body, 404, 'NOT_FOUND');
    expect(unknown.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
    expect((await api.get('/v1/analytics/sessions/9007199254740991')).status).toBe(404);
    expect422(await api.get('/v1/analytics/sessions/abc'), 'VALIDATION_FAILED', ['sessionId']);

    // Past raw retention: 7 days keep only the last week, so the fixture's sessions are gone from every raw report.
    expect((await api.put('/v1/analytics/settings', { rawRetentionDays: 7 })).status).toBe(200);
    const gone = await api.get(`/v1/analytics/sessions/${a1.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual(unknown.body);
    const clipped = await get(api, `/v1/analytics/sessions?${days}`);
    expect(clipped).toEqual({ data: [], meta: { total: 0, perPage: 15, currentPage: 1, lastPage: 1, rawDataFrom: dateOf(today.day - 7) } });
    // A range that ends before raw retention starts reads nothing (it answered 500: an empty UNION).
    const before = `startDate=${dateOf(today.day - 40)}&endDate=${dateOf(today.day - 30)}`;
    expect(await get(api, `/v1/analytics/heatmap/scroll?${before}&path=/home`)).toEqual({
      data: { path: '/home', pageviews: 0, averageDepth: 0, depths: Array.from({ length: 10 }, (_, i) => ({ depth: (i + 1) * 10, percentage: 0 })) },
      meta: { rawDataFrom: dateOf(today.day - 7) },
    });
  });

  it('draws the click heatmap of a page: grid points densest first and elements with rage and dead clicks, separated by device', async () => {
    const api = await fixtureSite();
    const heatmap = await get(api, `/v1/analytics/heatmap?${days}&path=/pricing`);
    expect(heatmap).toEqual({
      data: {
        path: '/pricing',
        clicks: 3,
        // 0.5012 and 0.5049 → 0.50; 1234 and 1232 px → 1230.
        points: [
          { x: 0.5, y: 1230, count: 2 },
          { x: 0.2, y: 100, count: 1 },
        ],
        elements: [
          { selector: 'button.buy', clicks: 2, rageClicks: 1, deadClicks: 1 },
          { selector: 'a.nav', clicks: 1, rageClicks: 0, deadClicks: 0 },
        ],
      },
      meta: { rawDataFrom: dateOf(today.day - 90) },
    });
    expect((await get(api, `/v1/analytics/heatmap?${days}&path=/pricing&device=mobile`)).data).toEqual({
      path: '/pricing',
      clicks: 1,
      points: [{ x: 0.2, y: 100, count: 1 }],
      elements: [{ selector: 'a.nav', clicks: 1, rageClicks: 0, deadClicks: 0 }],
    });
    expect((await get(api, `/v1/analytics/heatmap?${days}&path=/nowhere`)).data).toEqual({ path: '/nowhere', clicks: 0, points: [], elements: [] });
    expect((await get(api, `/v1/analytics/heatmap/scroll?${days}&path=/home`)).data).toEqual({
      path: '/home',
      pageviews: 1,
      averageDepth: 0,
      depths: Array.from({ length: 10 }, (_, i) => ({ depth: (i + 1) * 10, percentage: 0 })),
    });
  });

  it('answers realtime: visitors of the last 5 minutes on the path of their latest pageview, and 30 zero-filled minutes of pageviews', async () => {
    const api = await ctx.site();
    const now = Date.now();
    const ago = (min: number) => new Date(now - min * 60_000).toISOString();
    const pageviews = [2, 1, 10, 7].map((m) => now - m * 60_000);
    const res = await api.post('/v1/analytics/import', {
      events: [
        { visitorId: 'X', timestamp: ago(2), path: '/a' },
        { visitorId: 'X', timestamp: ago(1), path: '/b' },
        { visitorId: 'Y', timestamp: ago(10), path: '/a' },
        { visitorId: 'Y', timestamp: ago(3), path: '/a', type: 'engagement', engagedMs: 1000 },
        { visitorId: 'Z', timestamp: ago(7), path: '/c' },
        { visitorId: 'Old', timestamp: ago(45), path: '/old' },
      ],
    });
    expect(res.body.imported).toBe(6);
    const realtime = await get(api, '/v1/analytics/realtime');
    expect(realtime.data).toEqual({
      visitors: 2,
      pages: [
        { path: '/a', visitors: 1 },
        { path: '/b', visitors: 1 },
      ],
    });
    expect(realtime.meta).toEqual({ rawDataFrom: dateOf(localTime(now, 'UTC').day - 90) });
    const minutes = (await get(api, '/v1/analytics/realtime/pageviews')).data;
    expect(minutes).toHaveLength(30);
    const first = Date.parse(minutes[0].minute);
    expect(Date.parse(minutes[29].minute) - first).toBe(29 * 60_000);
    expect(Math.floor(Date.now() / 60_000) * 60_000 - Date.parse(minutes[29].minute)).toBeLessThanOrEqual(60_000);
    for (const m of minutes) {
      const start = Date.parse(m.minute);
      expect(m.pageviews, m.minute).toBe(pageviews.filter((t) => t >= start && t < start + 60_000).length);
    }
    expect(minutes.reduce((n: number, m: any) => n + m.pageviews, 0)).toBe(4);
    expect422(await api.get('/v1/analytics/realtime?period=7d'), 'VALIDATION_FAILED', ['period']);
  });
});
