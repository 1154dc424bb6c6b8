import { describe, expect, it } from 'vitest';
import { eventsOf, rebuildQuietDays, sessionsOf } from '../../../test/helpers/analytics.js';
import { allScopesExcept, createTokenFor } from '../../../test/helpers/app.js';
import { client, expect422, expectErrorShape } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';

const ctx = useTestApp();
const DAY_MS = 86_400_000;
/** A UTC midnight a few days back: inside every retention, so imports accept it. */
const base = Math.floor(Date.now() / DAY_MS) * DAY_MS - 5 * DAY_MS;
const iso = (offsetMs: number) => new Date(base + offsetMs).toISOString();
const MIN = 60_000;

const rollups = async (siteId: string, dim: string) =>
  (
    await ctx.app.database.db
      .selectFrom('analytics_daily')
      .select(['day', 'v1', 'visitors', 'visits', 'pageviews', 'bounces', 'duration_ms', 'engaged_ms', 'events', 'conversions'])
      .where('site_id', '=', siteId)
      .where('dim', '=', dim)
      .orderBy('day')
      .orderBy('v1')
      .execute()
  ).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)])));

describe('analytics import (decisions A5)', () => {
  it('imports JSON events as stated, groups sessions by sessionId or the 30-minute rule, and answers 201 with counts', async () => {
    const api = await ctx.site();
    const res = await api.post('/v1/analytics/import', {
      events: [
        {
          id: 'e1',
          timestamp: iso(10 * MIN),
          visitorId: 'v1',
          url: 'https://example.test/a/?utm_source=x&q=1',
          referrer: 'https://news.ycombinator.com/item',
          country: 'de',
          city: 'Berlin',
          browser: 'Firefox',
          os: 'Linux',
          device: 'desktop',
          screen: '1920x1080',
          language: 'de',
        },
        { id: 'e2', timestamp: iso(20 * MIN), visitorId: 'v1', path: '/b', type: 'pageview' },
        { id: 'e3', timestamp: iso(50 * MIN), visitorId: 'v1', path: '/b', type: 'engagement', engagedMs: 4000, scrollDepth: 60 },
        // 30 min + 1 s after e3: a new session by the same visitor.
        { id: 'e4', timestamp: iso(80 * MIN + 1000), visitorId: 'v1', path: '/c' },
        { id: 'e5', timestamp: iso(0), visitorId: 'v2', sessionId: 's1', path: '/a' },
        // Hours later, but the same sessionId: the same session.
        { id: 'e6', timestamp: iso(300 * MIN), visitorId: 'v2', sessionId: 's1', path: '/a', type: 'goal', name: 'signup' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ imported: 6, skipped: 0, errors: [], errorCount: 0 });
    const sessions = await sessionsOf(ctx.app, api.siteId);
    expect(sessions.map((s) => [s.started_at - base, s.duration_ms, s.pageviews, s.events, s.bounce, s.conversions, s.entry_path, s.exit_path])).toEqual([
      [0, 300 * MIN, 1, 2, 0, 1, '/a', '/a'],
      [10 * MIN, 40 * MIN, 2, 3, 0, 0, '/a', '/b'],
      [80 * MIN + 1000, 0, 1, 1, 1, 0, '/c', '/c'],
    ]);
    expect(sessions[1]).toMatchObject({
      country: 'DE',
      city: 'Berlin',
      browser: 'Firefox',
      os: 'Linux',
      device: 'desktop',
      screen: '1920x1080',
      language: 'de',
      referrer: 'news.ycombinator.com',
      source: 'social',
      utm_source: null,
    });
    expect(sessions[1].visitor).toBe(sessions[2].visitor);
    expect((await eventsOf(ctx.app, api.siteId)).find((e) => e.type === 'engagement')).toMatchObject({ value: 4000, y: 60, path: '/b' });
  });

  it('is idempotent by id: a re-run stores nothing and answers skipped; repeated ids in one request count once', async () => {
    const api = await ctx.site();
    const events = [
      { id: 'a', timestamp: iso(0), visitorId: 'v', path: '/' },
      { id: 'b', timestamp: iso(MIN), visitorId: 'v', path: '/x' },
      { id: 'b', timestamp: iso(MIN), visitorId: 'v', path: '/x' },
      { timestamp: iso(2 * MIN), visitorId: 'v', path: '/no-id' },
    ];
    expect((await api.post('/v1/analytics/import', { events })).body).toEqual({ imported: 3, skipped: 1, errors: [], errorCount: 0 });
    expect((await api.post('/v1/analytics/import', { events })).body).toEqual({ imported: 1, skipped: 3, errors: [], errorCount: 0 });
    // Events without an id cannot be recognised: each run stores them again.
    expect((await eventsOf(ctx.app, api.siteId)).map((e) => e.path)).toEqual(['/', '/x', '/no-id', '/no-id']);
  });

  it('reads NDJSON, numbering the lines that are not JSON', async () => {
    const api = await ctx.site();
    const lines = [
      JSON.stringify({ id: 'n1', timestamp: iso(0), visitorId: 'v', path: '/n' }),
      '{broken',
      JSON.stringify({ id: 'n2', timestamp: iso(MIN), visitorId: 'v', path: '/m' }),
    ];
    const res = await api.post('/v1/analytics/import', `${lines.join('\n')}\n`, { 'content-type': 'application/x-ndjson' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ imported: 2, skipped: 0, errors: [{ index: 1, field: '', message: 'must be an object' }], errorCount: 1 });
  });

  it('lists each wrong event by index and field and stores the others', async () => {
    const api = await ctx.site();
    const future = new Date(Date.now() + 10 * MIN).toISOString();
    const ancient = new Date(Date.now() - 800 * DAY_MS).toISOString();
    const res = await api.post('/v1/analytics/import', {
      events: [
        { timestamp: iso(0), visitorId: 'ok', path: '/ok' },
        { timestamp: 'yesterday', visitorId: 'v', path: '/' },
        { timestamp: future, visitorId: 'v', path: '/' },
        { timestamp: ancient, visitorId: 'v', path: '/' },
        { timestamp: iso(0), path: '/' },
        { timestamp: iso(0), visitorId: 'v' },
        { timestamp: iso(0), visitorId: 'v', path: 'relative' },
        { timestamp: iso(0), visitorId: 'v', path: '/', type: 'teleport' },
        { timestamp: iso(0), visitorId: 'v', path: '/', country: 'Germany', device: 'fridge' },
        { timestamp: iso(0), visitorId: 'v', path: '/', type: 'cwv', metric: 'LCP' },
        'text',
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.imported).toBe(1);
    expect(res.body.errors).toEqual([
      { index: 1, field: 'timestamp', message: 'must be an ISO 8601 date-time with an offset' },
      { index: 2, field: 'timestamp', message: 'must not be more than 5 minutes in the future' },
      { index: 3, field: 'timestamp', message: "is older than the site's aggregateRetentionDays" },
      { index: 4, field: 'visitorId', message: 'is required' },
      { index: 5, field: 'path', message: 'path or url is required' },
      { index: 6, field: 'path', message: 'must start with /' },
      { index: 7, field: 'type', message: 'must be one of pageview, engagement, click, outbound, download, form_start, form_submit, goal, cwv' },
      { index: 8, field: 'country', message: 'must be a string of 2-2 characters' },
      { index: 8, field: 'device', message: 'must be one of desktop, mobile, tablet' },
      { index: 9, field: 'value', message: 'is required for cwv events' },
      { index: 10, field: '', message: 'must be an object' },
    ]);
    expect(res.body.errorCount).toBe(11);
    expect((await eventsOf(ctx.app, api.siteId)).map((e) => e.path)).toEqual(['/ok']);
  });

  it('takes 10,000 events in one request and refuses 10,001 (422, nothing stored)', async () => {
    const api = await ctx.site();
    const make = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `k${i}`, timestamp: iso(i * 1000), visitorId: `v${i % 50}`, path: `/p${i % 20}` }));
    const over = await api.post('/v1/analytics/import', { events: make(10_001) });
    expect422(over, 'VALIDATION_FAILED', ['events']);
    expect(await eventsOf(ctx.app, api.siteId)).toHaveLength(0);
    const res = await api.post('/v1/analytics/import', { events: make(10_000) });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ imported: 10_000, skipped: 0, errors: [], errorCount: 0 });
    const count = await ctx.app.database.db
      .selectFrom('analytics_events')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('site_id', '=', api.siteId)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(10_000);
  }, 120_000);

  it('needs analytics.settings (403 otherwise) and a token (401)', async () => {
    const api = await ctx.site();
    const { token } = await createTokenFor(ctx.app, api.siteId, { scopes: allScopesExcept('analytics.settings') });
    const res = await client(ctx.app, token).post('/v1/analytics/import', { events: [{ timestamp: iso(0), visitorId: 'v', path: '/' }] });
    expect(res.status).toBe(403);
    expectErrorShape(res.body, 403, 'MISSING_SCOPE');
    expect((await client(ctx.app).post('/v1/analytics/import', { events: [] })).status).toBe(401);
  });
});

describe('analytics rollups (design 3.3)', () => {
  it('marks the days an import touched dirty, and a rebuild writes exact daily rows and clears the mark', async () => {
    const api = await ctx.site();
    const day = Math.round(base / DAY_MS);
    await api.post('/v1/analytics/import', {
      events: [
        { timestamp: iso(10 * MIN), visitorId: 'v1', path: '/a', country: 'DE' },
        { timestamp: iso(11 * MIN), visitorId: 'v1', path: '/b', country: 'DE' },
        { timestamp: iso(12 * MIN), visitorId: 'v1', path: '/b', type: 'engagement', engagedMs: 3000 },
        { timestamp: iso(20 * MIN), visitorId: 'v2', path: '/a', country: 'FR' },
        { timestamp: iso(120 * MIN), visitorId: 'v2', path: '/a', country: 'FR' },
        { timestamp: iso(DAY_MS + MIN), visitorId: 'v3', path: '/a' },
      ],
    });
    const days = async () =>
      (await ctx.app.database.db.selectFrom('analytics_days').select(['day', 'dirty']).where('site_id', '=', api.siteId).orderBy('day').execute()).map((r) => [
        Number(r.day),
        Number(r.dirty),
      ]);
    expect(await days()).toEqual([
      [day, 1],
      [day + 1, 1],
    ]);
    expect(await rebuildQuietDays(ctx.app)).toBeGreaterThanOrEqual(2);
    expect(await days()).toEqual([
      [day, 0],
      [day + 1, 0],
    ]);
    // Day 0: v1 one session (/a then /b, 2 min), v2 two sessions on /a (bounces); day 1: v3 one bounce.
    expect(await rollups(api.siteId, 'total')).toEqual([
      { day, v1: 0, visitors: 2, visits: 3, pageviews: 4, bounces: 2, duration_ms: 2 * MIN, engaged_ms: 0, events: 5, conversions: 0 },
      { day: day + 1, v1: 0, visitors: 1, visits: 1, pageviews: 1, bounces: 1, duration_ms: 0, engaged_ms: 0, events: 1, conversions: 0 },
    ]);
    const pages = await rollups(api.siteId, 'page');
    const paths = await ctx.app.database.db
      .selectFrom('analytics_values')
      .select(['id', 'value'])
      .where('site_id', '=', api.siteId)
      .where('dim', '=', 'path')
      .execute();
    const pathOf = new Map(paths.map((p) => [Number(p.id), p.value]));
    expect(pages.filter((p) => p.day === day).map((p) => [pathOf.get(p.v1), p.visitors, p.visits, p.pageviews, p.bounces, p.engaged_ms])).toEqual(
      [
        ['/a', 2, 3, 3, 2, 0],
        ['/b', 1, 1, 1, 0, 3000],
      ].sort((a, b) => paths.find((p) => p.value === a[0])!.id - paths.find((p) => p.value === b[0])!.id),
    );
    const countries = await rollups(api.siteId, 'country');
    expect(
      countries
        .filter((c) => c.day === day)
        .map((c) => [c.visitors, c.visits])
        .sort(),
    ).toEqual([
      [1, 1],
      [1, 2],
    ]);
    const monthly = await ctx.app.database.db
      .selectFrom('analytics_monthly')
      .select(['visitors', 'visits'])
      .where('site_id', '=', api.siteId)
      .where('dim', '=', 'total')
      .execute();
    expect(monthly.reduce((n, m) => n + Number(m.visits), 0)).toBe(4);
  });
});
