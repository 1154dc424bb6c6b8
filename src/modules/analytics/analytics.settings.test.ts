import { describe, expect, it } from 'vitest';
import { allScopesExcept, createTokenFor } from '../../../test/helpers/app.js';
import { client, expect422, expectErrorShape } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { analyticsOf } from './analytics.routes.js';
import { pruneAnalytics } from './analytics.tasks.js';
import { rebuildQuietDays } from '../../../test/helpers/analytics.js';

const ctx = useTestApp();
const DAY_MS = 86_400_000;
const MIN = 60_000;

describe('analytics settings (decisions A6)', () => {
  it('answers the defaults and the snippet before any PUT, updates partially, and keeps the rest', async () => {
    const api = await ctx.site();
    const key = (await api.get('/v1/site/info')).body.data.publicKey;
    const snippet = `<script defer src="${ctx.config.publicUrl}/v1/public/analytics/script.js" data-site-key="${key}"></script>`;
    expect((await api.get('/v1/analytics/settings')).body).toEqual({
      data: { trackingEnabled: true, rawRetentionDays: 90, aggregateRetentionDays: 730, excludedPaths: [], excludedIps: [], snippet },
    });
    const put = await api.put('/v1/analytics/settings', {
      excludedIps: ['203.0.113.77/24', ' 2001:DB8::1 ', '::ffff:198.51.100.7', '203.0.113.0/24'],
      excludedPaths: ['/admin/**'],
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toEqual({
      trackingEnabled: true,
      rawRetentionDays: 90,
      aggregateRetentionDays: 730,
      excludedPaths: ['/admin/**'],
      excludedIps: ['203.0.113.0/24', '2001:db8::1', '198.51.100.7'],
      snippet,
    });
    expect((await api.put('/v1/analytics/settings', { trackingEnabled: false, rawRetentionDays: 30 })).body.data).toMatchObject({
      trackingEnabled: false,
      rawRetentionDays: 30,
      aggregateRetentionDays: 730,
      excludedPaths: ['/admin/**'],
    });
    expect((await api.get('/v1/analytics/settings')).body.data.rawRetentionDays).toBe(30);
  });

  it('takes the retention bounds 7/365 and 30/3650 and refuses 6/366 and 29/3651', async () => {
    const api = await ctx.site();
    for (const [field, value] of [
      ['rawRetentionDays', 7],
      ['rawRetentionDays', 365],
      ['aggregateRetentionDays', 3650],
      ['aggregateRetentionDays', 365],
    ] as const)
      expect((await api.put('/v1/analytics/settings', { [field]: value })).status, `${field} ${value}`).toBe(200);
    expect((await api.put('/v1/analytics/settings', { rawRetentionDays: 7, aggregateRetentionDays: 30 })).status).toBe(200);
    for (const [field, value] of [
      ['rawRetentionDays', 6],
      ['rawRetentionDays', 366],
      ['aggregateRetentionDays', 29],
      ['aggregateRetentionDays', 3651],
      ['rawRetentionDays', 7.5],
    ] as const)
      expect422(await api.put('/v1/analytics/settings', { [field]: value }), 'VALIDATION_FAILED', [field], `${field} ${value}`);
    expect((await api.get('/v1/analytics/settings')).body.data).toMatchObject({ rawRetentionDays: 7, aggregateRetentionDays: 30 });
  });

  it('refuses aggregate retention below raw retention (RETENTION_INVALID), also against the stored value, changing nothing', async () => {
    const api = await ctx.site();
    expect422(await api.put('/v1/analytics/settings', { rawRetentionDays: 100, aggregateRetentionDays: 99 }), 'RETENTION_INVALID', ['aggregateRetentionDays']);
    expect((await api.put('/v1/analytics/settings', { rawRetentionDays: 60, aggregateRetentionDays: 60 })).status).toBe(200);
    expect422(await api.put('/v1/analytics/settings', { rawRetentionDays: 61 }), 'RETENTION_INVALID', ['aggregateRetentionDays']);
    expect((await api.get('/v1/analytics/settings')).body.data).toMatchObject({ rawRetentionDays: 60, aggregateRetentionDays: 60 });
  });

  it('refuses a bad address or range on its index, paths not starting with /, more than 100 entries, and an empty body', async () => {
    const api = await ctx.site();
    expect422(await api.put('/v1/analytics/settings', { excludedIps: ['10.0.0.1', '10.0.0.300'] }), 'VALIDATION_FAILED', ['excludedIps[1]']);
    expect422(await api.put('/v1/analytics/settings', { excludedIps: ['2001:db8::/129'] }), 'VALIDATION_FAILED', ['excludedIps[0]']);
    expect422(await api.put('/v1/analytics/settings', { excludedPaths: ['admin'] }), 'VALIDATION_FAILED', ['excludedPaths[0]']);
    const many = Array.from({ length: 101 }, (_, i) => `10.0.${Math.floor(i / 200)}.${i}`);
    expect((await api.put('/v1/analytics/settings', { excludedIps: many.slice(0, 100) })).status).toBe(200);
    expect422(await api.put('/v1/analytics/settings', { excludedIps: many }), 'VALIDATION_FAILED', ['excludedIps']);
    expect((await api.put('/v1/analytics/settings', {})).status).toBe(422);
    expect((await api.get('/v1/analytics/settings')).body.data.excludedIps).toHaveLength(100);
  });

  it('needs analytics.settings for both reads and writes; another site keeps its own settings', async () => {
    const api = await ctx.site();
    const { token } = await createTokenFor(ctx.app, api.siteId, { scopes: allScopesExcept('analytics.settings') });
    const other = client(ctx.app, token);
    expectErrorShape((await other.get('/v1/analytics/settings')).body, 403, 'MISSING_SCOPE');
    expectErrorShape((await other.put('/v1/analytics/settings', { trackingEnabled: false })).body, 403, 'MISSING_SCOPE');
    await api.put('/v1/analytics/settings', { rawRetentionDays: 14 });
    const second = await ctx.site();
    expect((await second.get('/v1/analytics/settings')).body.data.rawRetentionDays).toBe(90);
  });
});

describe('analytics retention (decisions A6)', () => {
  it('deletes raw events and sessions past rawRetentionDays in batches, never a dirty day, then rollups past aggregateRetentionDays', async () => {
    const api = await ctx.site();
    const other = await ctx.site();
    const today = Math.floor(Date.now() / DAY_MS);
    const at = (daysAgo: number, min: number) => new Date((today - daysAgo) * DAY_MS + min * MIN).toISOString();
    const events = (daysAgo: number) => [
      { timestamp: at(daysAgo, 0), visitorId: 'a', path: '/x' },
      { timestamp: at(daysAgo, 1), visitorId: 'a', path: '/y' },
      { timestamp: at(daysAgo, 2), visitorId: 'b', path: '/x' },
    ];
    for (const client of [api, other]) {
      expect((await client.post('/v1/analytics/import', { events: [...events(100), ...events(10)] })).body.imported).toBe(6);
    }
    const { store } = analyticsOf(ctx.app.database.db);
    const db = ctx.app.database.db;
    const count = async (table: 'analytics_events' | 'analytics_sessions' | 'analytics_daily', siteId = api.siteId) =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .where('site_id', '=', siteId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    // Dirty days are not pruned: their rollups are not built yet.
    await pruneAnalytics(db, store, Date.now(), 2);
    expect([await count('analytics_events'), await count('analytics_sessions')]).toEqual([6, 4]);

    await rebuildQuietDays(ctx.app);
    const rollupRows = await count('analytics_daily');
    expect(rollupRows).toBeGreaterThan(0);
    // Batches of 2: 3 old events go in two passes, then their 2 sessions.
    await pruneAnalytics(db, store, Date.now(), 2);
    expect(await count('analytics_events')).toBe(4);
    await pruneAnalytics(db, store, Date.now(), 2);
    expect(await count('analytics_events')).toBe(3);
    await pruneAnalytics(db, store, Date.now(), 2);
    expect([await count('analytics_events'), await count('analytics_sessions')]).toEqual([3, 2]);
    expect(await count('analytics_daily')).toBe(rollupRows);
    // The other site's rows went the same way, by its own (default) settings.
    expect(await count('analytics_events', other.siteId)).toBe(3);

    // Rollups: kept for aggregateRetentionDays; 100 days ago is past 60.
    expect((await api.put('/v1/analytics/settings', { rawRetentionDays: 30, aggregateRetentionDays: 60 })).status).toBe(200);
    for (let i = 0; i < 100 && (await pruneAnalytics(db, store, Date.now(), 5)) > 0; i++);
    const days = await db.selectFrom('analytics_daily').select('day').distinct().where('site_id', '=', api.siteId).execute();
    expect(days.map((d) => Number(d.day))).toEqual([today - 10]);
    expect([await count('analytics_events'), await count('analytics_sessions')]).toEqual([3, 2]);
    expect(
      await db
        .selectFrom('analytics_daily')
        .select('day')
        .where('site_id', '=', other.siteId)
        .where('day', '=', today - 100)
        .execute(),
    ).not.toHaveLength(0);
  });
});
