import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { type FakeDay, FakeGoogle, type FakeRow } from '../../../test/fakes/google-search.js';
import { expect422, expectErrorShape } from '../../../test/helpers/http.js';
import { TEST_SECRET_KEY } from '../../../test/helpers/app.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { reencryptSecrets } from '../../shared/encrypted-columns.js';
import { parseKey, SecretBox } from '../../shared/secrets.js';
import { addDays, pacificDay } from './search-console.dates.js';

const fake = await new FakeGoogle().start();
afterAll(() => fake.close());
const ctx = useTestApp({
  searchConsole: {
    ...fake.endpoints,
    syncIntervalMs: 3_600_000,
    requestsPerSecond: 1000,
    maxRowsPerDay: 100_000,
    indexingDailyQuota: 2,
    indexingIntervalMs: 0,
  },
});
type Api = Awaited<ReturnType<typeof ctx.site>>;

const DATA = [
  '/v1/integrations/search/stats',
  '/v1/integrations/search/growing-queries',
  '/v1/integrations/search/lost-queries',
  '/v1/integrations/search/growing-pages',
  '/v1/integrations/search/declining-pages',
  '/v1/integrations/search/links',
];
const db = () => ctx.app.database.db;
const runJobs = () => ctx.app.worker.runDueJobs();
const uniqueProperty = () => `sc-domain:${randomBytes(4).toString('hex')}.test`;

/** Connects a site to a new property of the fake (siteOwner) with a new service account. */
async function connect(api: Api, property = uniqueProperty()) {
  fake.properties.set(property, 'siteOwner');
  const res = await api.put('/v1/integrations/search/connection', { propertyUrl: property, credentials: fake.serviceAccount() });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return property;
}

// ---- the fixture of SC3's numbers: D is the last final day; 7d windows D-6..D and D-13..D-7 ----
const today = pacificDay(new Date());
const D = addDays(today, -3);
const day = (n: number) => addDays(D, -n);
const q = (key: string, clicks: number, impressions: number, position: number): FakeRow => ({ keys: [key], clicks, impressions, position });
const page = (path: string, clicks: number, impressions: number, position: number) => q(`https://example.test${path}`, clicks, impressions, position);
const FIXTURE: Record<string, FakeDay> = {
  // current window
  [D]: {
    totals: { clicks: 40, impressions: 1000, position: 4 },
    query: [
      q('alpha', 20, 200, 2),
      q('beta', 5, 50, 10),
      q('echo', 0, 20, 7),
      q('foxtrot', 5, 70, 3),
      q('golf', 10, 100, 3),
      q('hotel', 4, 40, 5),
      q('india', 4, 40, 5),
    ],
    page: [page('/a', 6, 30, 2)],
  },
  [day(3)]: {
    totals: { clicks: 20, impressions: 3000, position: 8 },
    query: [q('alpha', 10, 600, 6), q('charlie', 0, 30, 12)],
    page: [page('/b', 3, 60, 5)],
  },
  // previous window
  [day(10)]: {
    totals: { clicks: 50, impressions: 2000, position: 5.5 },
    query: [
      q('alpha', 10, 100, 3),
      q('charlie', 8, 80, 4),
      q('delta', 3, 10, 1),
      q('echo', 3, 10, 1),
      q('golf', 5, 50, 2),
      q('hotel', 3, 30, 4),
      q('india', 4, 40, 5),
    ],
    page: [page('/a', 2, 20, 3), page('/b', 9, 90, 4)],
  },
  // before both windows: never counted
  [day(14)]: { totals: { clicks: 1000, impressions: 5000, position: 1 }, query: [q('alpha', 1000, 5000, 1)], page: [page('/a', 1000, 5000, 1)] },
};

async function fixtureSite() {
  const api = await ctx.site();
  const property = uniqueProperty();
  for (const [date, d] of Object.entries(FIXTURE)) fake.setDay(property, date, d);
  await connect(api, property);
  await runJobs();
  return { api, property };
}

describe('search console: before a connection (decisions A2, SC4)', () => {
  it('answers 409 integration_not_connected on the six data endpoints, search-indexing logs and stats, sync and disconnect; the connection reads as not connected', async () => {
    const api = await ctx.site();
    for (const path of [...DATA, '/v1/seo/search-indexing/logs', '/v1/seo/search-indexing/stats']) {
      const res = await api.get(path);
      expect(res.status, path).toBe(409);
      expectErrorShape(res.body, 409, 'integration_not_connected');
    }
    expectErrorShape((await api.post('/v1/integrations/search/sync')).body, 409, 'integration_not_connected');
    expectErrorShape((await api.delete('/v1/integrations/search/connection')).body, 409, 'integration_not_connected');
    const conn = await api.get('/v1/integrations/search/connection');
    expect(conn.status).toBe(200);
    expect(conn.body.data).toEqual({
      connected: false,
      propertyUrl: null,
      authType: null,
      clientEmail: null,
      status: null,
      lastError: null,
      connectedAt: null,
      lastSyncAt: null,
      dataFrom: null,
      dataThrough: null,
    });
  });
});

describe('search console: connecting (decisions SC1)', () => {
  it('refuses credentials the token endpoint rejects (422 SEARCH_CONSOLE_AUTH_FAILED) and stores nothing', async () => {
    const api = await ctx.site();
    const property = uniqueProperty();
    fake.properties.set(property, 'siteOwner');
    // A well-formed key whose public key Google does not know: the JWT signature fails.
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const unknownKey = { ...fake.serviceAccount(), private_key: stranger };
    expect422(await api.put('/v1/integrations/search/connection', { propertyUrl: property, credentials: unknownKey }), 'SEARCH_CONSOLE_AUTH_FAILED', [
      'credentials',
    ]);
    const unknownRefresh = { type: 'refresh_token', clientId: 'x', clientSecret: 'y', refreshToken: 'z' };
    expect422(await api.put('/v1/integrations/search/connection', { propertyUrl: property, credentials: unknownRefresh }), 'SEARCH_CONSOLE_AUTH_FAILED', [
      'credentials',
    ]);
    expect((await api.get('/v1/integrations/search/connection')).body.data.connected).toBe(false);
    expect(await db().selectFrom('search_connections').selectAll().where('site_id', '=', api.siteId).execute()).toEqual([]);
  });

  it('refuses malformed credentials and property URLs (422 VALIDATION_FAILED on the field)', async () => {
    const api = await ctx.site();
    const good = fake.serviceAccount();
    const put = (body: unknown) => api.put('/v1/integrations/search/connection', body);
    expect422(await put({ propertyUrl: 'sc-domain:a.test', credentials: { ...good, private_key: 'not a key' } }), 'VALIDATION_FAILED', [
      'credentials.private_key',
    ]);
    expect422(await put({ propertyUrl: 'sc-domain:a.test', credentials: { ...good, client_email: '' } }), 'VALIDATION_FAILED', ['credentials.client_email']);
    expect422(await put({ propertyUrl: 'sc-domain:a.test', credentials: { type: 'refresh_token', clientId: 'a', clientSecret: 'b' } }), 'VALIDATION_FAILED', [
      'credentials.refreshToken',
    ]);
    expect422(await put({ propertyUrl: 'sc-domain:a.test', credentials: { type: 'api_key' } }), 'VALIDATION_FAILED', ['credentials.type']);
    expect((await put({ propertyUrl: 'https://example.test', credentials: good })).status).toBe(422);
    expect((await put({ propertyUrl: 'sc-domain:a.test' })).status).toBe(422);
    expect((await api.get('/v1/integrations/search/connection')).body.data.connected).toBe(false);
  });

  it('refuses a property the credentials cannot read (siteUnverifiedUser, or 403) with 422 SEARCH_CONSOLE_PROPERTY_DENIED', async () => {
    const api = await ctx.site();
    const unverified = uniqueProperty();
    fake.properties.set(unverified, 'siteUnverifiedUser');
    for (const propertyUrl of [unverified, uniqueProperty()]) {
      const res = await api.put('/v1/integrations/search/connection', { propertyUrl, credentials: fake.serviceAccount() });
      expect422(res, 'SEARCH_CONSOLE_PROPERTY_DENIED', ['propertyUrl']);
    }
    expect((await api.get('/v1/integrations/search/connection')).body.data.connected).toBe(false);
  });

  it('answers 424 integration_failed when Google answers 5xx during the check, storing nothing', async () => {
    const api = await ctx.site();
    const property = uniqueProperty();
    fake.properties.set(property, 'siteOwner');
    fake.fail(500, 1, 'sites');
    const res = await api.put('/v1/integrations/search/connection', { propertyUrl: property, credentials: fake.serviceAccount() });
    expect(res.status).toBe(424);
    expectErrorShape(res.body, 424, 'integration_failed');
    expect((await api.get('/v1/integrations/search/connection')).body.data.connected).toBe(false);
  });

  it("stores the credentials encrypted, never answers them, signs the JWT itself and ignores the key file's token_uri", async () => {
    const api = await ctx.site();
    const property = uniqueProperty();
    fake.properties.set(property, 'siteFullUser');
    const key = fake.serviceAccount('owner@proj.iam.gserviceaccount.com', 'http://127.0.0.1:1/stolen-token');
    const before = fake.requests.length;
    const res = await api.put('/v1/integrations/search/connection', { propertyUrl: property, credentials: key });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      connected: true,
      propertyUrl: property,
      authType: 'service_account',
      clientEmail: 'owner@proj.iam.gserviceaccount.com',
      status: 'syncing',
      lastError: null,
      dataThrough: null,
    });
    expect(JSON.stringify(res.body)).not.toMatch(/PRIVATE KEY|token_uri|stolen/);
    expect(JSON.stringify((await api.get('/v1/integrations/search/connection')).body)).not.toMatch(/PRIVATE KEY/);
    // The token came from the configured endpoint with an RS256 JWT the fake verified.
    const calls = fake.requests.slice(before);
    expect(calls.map((c) => c.path)).toEqual(['/token', `/webmasters/v3/sites/${encodeURIComponent(property)}`]);
    expect(calls[0]!.body.grant_type).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    // The database holds only ciphertext.
    const row = await db().selectFrom('search_connections').select('credentials').where('site_id', '=', api.siteId).executeTakeFirstOrThrow();
    expect(row.credentials).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(row.credentials).not.toMatch(/PRIVATE|owner@|BEGIN/);
    // Syncing with no data yet: 200 with zeros and dataThrough null.
    const stats = await api.get('/v1/integrations/search/stats');
    expect(stats.status).toBe(200);
    expect(stats.body.data).toEqual({
      clicks: 0,
      impressions: 0,
      ctr: 0,
      position: null,
      comparison: { clicks: 0, impressions: 0, ctr: 0, position: null, startDate: null, endDate: null },
      startDate: null,
      endDate: null,
      dataThrough: null,
    });
    expect((await api.get('/v1/integrations/search/growing-queries')).body).toEqual({ data: [], meta: { total: 0, perPage: 15, currentPage: 1, lastPage: 1 } });
    expect((await api.get('/v1/seo/search-indexing/stats')).body).toEqual({ total: 0, success: 0, failed: 0, lastSubmittedAt: null });
  });

  it('accepts an OAuth refresh token and needs analytics.gsc', async () => {
    const api = await ctx.site();
    const property = uniqueProperty();
    fake.properties.set(property, 'siteOwner');
    const res = await api.put('/v1/integrations/search/connection', { propertyUrl: property, credentials: fake.refreshToken() });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ connected: true, authType: 'refresh_token', clientEmail: null });
    const spec = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const [path, method] of [
      ['/v1/integrations/search/connection', 'put'],
      ['/v1/integrations/search/stats', 'get'],
    ] as const) {
      expect(JSON.stringify(spec.paths[path][method])).toContain('analytics.gsc');
    }
  });
});

describe('search console: the numbers (decisions SC3)', () => {
  it('the overview sums the date totals of the period ending at dataThrough, with the equal period before, position weighted by impressions', async () => {
    const { api } = await fixtureSite();
    const res = await api.get('/v1/integrations/search/stats?period=7d');
    expect(res.status).toBe(200);
    // Current: D (40 clicks, 1000 impr, pos 4) + D-3 (20, 3000, 8): ctr 60/4000 = 0.015, position (4*1000 + 8*3000)/4000 = 7.
    expect(res.body.data).toEqual({
      clicks: 60,
      impressions: 4000,
      ctr: 0.015,
      position: 7,
      comparison: { clicks: 50, impressions: 2000, ctr: 0.025, position: 5.5, startDate: day(13), endDate: day(7) },
      startDate: day(6),
      endDate: D,
      dataThrough: D,
    });
    // 28d (the default) takes D-27..D: every fixture day (D-14 included), the previous window is empty.
    const month = (await api.get('/v1/integrations/search/stats')).body.data;
    expect(month).toMatchObject({ clicks: 1110, impressions: 11000, startDate: day(27), endDate: D });
    // (4*1000 + 8*3000 + 5.5*2000 + 1*5000) / 11000 = 44000/11000 = 4
    expect(month.position).toBe(4);
    expect(month.comparison).toEqual({ clicks: 0, impressions: 0, ctr: 0, position: null, startDate: day(55), endDate: day(28) });
    // Dates in place of a period.
    const dates = (await api.get(`/v1/integrations/search/stats?startDate=${day(3)}&endDate=${D}`)).body.data;
    expect(dates).toMatchObject({ clicks: 60, startDate: day(3), endDate: D, comparison: { clicks: 0, startDate: day(7), endDate: day(4) } });
  });

  it('growing queries: change > 0 by change desc, clicks desc, query; the percent of the previous clicks, null from 0', async () => {
    const { api } = await fixtureSite();
    const res = await api.get('/v1/integrations/search/growing-queries?period=7d');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        // alpha: 10 -> 20+10; impressions 200+600; position (2*200 + 6*600)/800 = 5
        { query: 'alpha', clicks: 30, impressions: 800, ctr: 0.0375, position: 5, clicksChange: 20, clicksChangePercent: 200 },
        { query: 'golf', clicks: 10, impressions: 100, ctr: 0.1, position: 3, clicksChange: 5, clicksChangePercent: 100 },
        { query: 'beta', clicks: 5, impressions: 50, ctr: 0.1, position: 10, clicksChange: 5, clicksChangePercent: null },
        { query: 'foxtrot', clicks: 5, impressions: 70, ctr: 0.0714, position: 3, clicksChange: 5, clicksChangePercent: null },
        // 3 -> 4: 100 * 1/3 = 33.3
        { query: 'hotel', clicks: 4, impressions: 40, ctr: 0.1, position: 5, clicksChange: 1, clicksChangePercent: 33.3 },
      ],
      meta: { total: 5, perPage: 15, currentPage: 1, lastPage: 1 },
    });
    const second = await api.get('/v1/integrations/search/growing-queries?period=7d&limit=2&page=2');
    expect(second.body.data.map((r: { query: string }) => r.query)).toEqual(['beta', 'foxtrot']);
    expect(second.body.meta).toEqual({ total: 5, perPage: 2, currentPage: 2, lastPage: 3 });
    expect((await api.get('/v1/integrations/search/growing-queries?period=7d&limit=2&page=4')).body).toEqual({
      data: [],
      meta: { total: 5, perPage: 2, currentPage: 4, lastPage: 3 },
    });
    // minImpressions: alpha (800), golf (100) and foxtrot (70) have 60 or more in a period; beta (50) and hotel (40, 30) do not.
    const min = await api.get('/v1/integrations/search/growing-queries?period=7d&minImpressions=60');
    expect(min.body.data.map((r: { query: string }) => r.query)).toEqual(['alpha', 'golf', 'foxtrot']);
  });

  it('lost queries: change < 0 by change asc, then query; a key with no clicks now is -100, and without impressions has position null', async () => {
    const { api } = await fixtureSite();
    const res = await api.get('/v1/integrations/search/lost-queries?period=7d');
    expect(res.body).toEqual({
      data: [
        { query: 'charlie', clicks: 0, impressions: 30, ctr: 0, position: 12, clicksChange: -8, clicksChangePercent: -100 },
        { query: 'delta', clicks: 0, impressions: 0, ctr: 0, position: null, clicksChange: -3, clicksChangePercent: -100 },
        { query: 'echo', clicks: 0, impressions: 20, ctr: 0, position: 7, clicksChange: -3, clicksChangePercent: -100 },
      ],
      meta: { total: 3, perPage: 15, currentPage: 1, lastPage: 1 },
    });
  });

  it('answers the same from the period snapshot (period=7d) as from the daily rows (the same 7 days as dates)', async () => {
    const { api } = await fixtureSite();
    const snapshot = await db().selectFrom('search_period_keys').select('period').distinct().where('site_id', '=', api.siteId).execute();
    expect(snapshot.map((r) => r.period).sort()).toEqual(['12m', '16m', '28d', '30d', '3m', '6m', '7d', '90d']);
    for (const list of ['growing-queries', 'lost-queries', 'growing-pages', 'declining-pages']) {
      const named = await api.get(`/v1/integrations/search/${list}?period=7d&limit=3`);
      const dated = await api.get(`/v1/integrations/search/${list}?startDate=${day(6)}&endDate=${D}&limit=3`);
      expect(named.body.data.length, list).toBeGreaterThan(0);
      expect(dated.body, list).toEqual(named.body);
    }
  });

  it('growing and declining pages', async () => {
    const { api } = await fixtureSite();
    expect((await api.get('/v1/integrations/search/growing-pages?period=7d')).body.data).toEqual([
      { page: 'https://example.test/a', clicks: 6, impressions: 30, ctr: 0.2, position: 2, clicksChange: 4, clicksChangePercent: 200 },
    ]);
    // 9 -> 3: 100 * -6/9 = -66.7
    expect((await api.get('/v1/integrations/search/declining-pages?period=7d')).body.data).toEqual([
      { page: 'https://example.test/b', clicks: 3, impressions: 60, ctr: 0.05, position: 5, clicksChange: -6, clicksChangePercent: -66.7 },
    ]);
  });

  it('validates the period and dates (422 VALIDATION_FAILED) the same on every data endpoint', async () => {
    const { api } = await fixtureSite();
    for (const path of DATA) {
      expect422(await api.get(`${path}?period=5d`), 'VALIDATION_FAILED', ['period'], path);
      expect422(await api.get(`${path}?startDate=${D}`), 'VALIDATION_FAILED', ['endDate'], path);
      expect422(await api.get(`${path}?startDate=${D}&endDate=${day(1)}`), 'VALIDATION_FAILED', ['startDate'], path);
      expect422(await api.get(`${path}?startDate=${addDays(today, -500)}&endDate=${D}`), 'VALIDATION_FAILED', ['startDate'], path);
      expect422(await api.get(`${path}?startDate=2026-02-30&endDate=${D}`), 'VALIDATION_FAILED', ['startDate'], path);
    }
    expect422(await api.get('/v1/integrations/search/lost-queries?limit=101'), 'VALIDATION_FAILED', ['limit']);
  });

  it("keeps each site's data to itself", async () => {
    const { api } = await fixtureSite();
    const other = await ctx.site();
    expect((await other.get('/v1/integrations/search/stats')).status).toBe(409);
    await connect(other);
    expect((await other.get('/v1/integrations/search/stats?period=7d')).body.data).toMatchObject({ clicks: 0, dataThrough: null });
    expect((await api.get('/v1/integrations/search/stats?period=7d')).body.data.clicks).toBe(60);
  });
});

describe('search console: the sync (decisions SC2)', () => {
  const counts = async (siteId: string) => {
    const n = async (table: 'search_daily_rows' | 'search_daily_totals' | 'search_keys') =>
      Number(
        (
          await db()
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('site_id', '=', siteId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    return { rows: await n('search_daily_rows'), totals: await n('search_daily_totals'), keys: await n('search_keys') };
  };

  it('asks for final web data, stores each day once, and a second run stores the same rows', async () => {
    const { api, property } = await fixtureSite();
    const queries = fake.requests.filter((r) => r.path.includes(encodeURIComponent(property)) && r.path.endsWith('/query'));
    expect(queries[0]!.body).toMatchObject({
      dimensions: ['date'],
      type: 'web',
      dataState: 'final',
      rowLimit: 25_000,
      startRow: 0,
      endDate: addDays(today, -1),
    });
    // 4 days x (query + page) after the date request of the recent range, then the backfill's date request.
    const first = await counts(api.siteId);
    // rows: D 7 + 1, D-3 2 + 1, D-10 7 + 2, D-14 1 + 1 = 22; keys: 9 queries + 2 pages
    expect(first).toEqual({ rows: 22, totals: 4, keys: 11 });
    const conn = (await api.get('/v1/integrations/search/connection')).body.data;
    expect(conn).toMatchObject({ status: 'ok', lastError: null, dataFrom: day(14), dataThrough: D });
    const sync = await api.post('/v1/integrations/search/sync');
    expect(sync.status).toBe(202);
    expect(sync.body).toEqual({ data: { queued: true } });
    // A second request joins the first: one job.
    await api.post('/v1/integrations/search/sync');
    const jobs = await db().selectFrom('jobs').select('id').where('site_id', '=', api.siteId).where('key', '=', 'search_console.sync').execute();
    expect(jobs).toHaveLength(1);
    await runJobs();
    expect(await counts(api.siteId)).toEqual(first);
    expect((await api.get('/v1/integrations/search/stats?period=7d')).body.data.clicks).toBe(60);
  });

  it('reads a 25,001-row day in two pages (startRow 0 and 25000)', async () => {
    const api = await ctx.site();
    const property = uniqueProperty();
    const query = Array.from({ length: 25_001 }, (_, i) => q(`query ${i}`, i % 7, 10, 2));
    fake.setDay(property, D, { totals: { clicks: 1, impressions: 2, position: 3 }, query, page: [] });
    await connect(api, property);
    await runJobs();
    expect(fake.startRows(D, 'query').filter((r, i, all) => all.indexOf(r) === i)).toEqual([0, 25_000]);
    const stored = await db()
      .selectFrom('search_daily_rows')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('site_id', '=', api.siteId)
      .where('kind', '=', 'query')
      .where('date', '=', D)
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(25_001);
  }, 60_000);

  it('backfills history newest first, 30 days a run, the scheduler queueing the next run at once', async () => {
    const api = await ctx.site();
    const property = uniqueProperty();
    const old = addDays(today, -75);
    fake.setDay(property, old, { totals: { clicks: 7, impressions: 70, position: 2 }, query: [q('old', 7, 70, 2)], page: [] });
    await connect(api, property);
    await runJobs(); // today-30..yesterday, then the 30 days before
    expect((await api.get('/v1/integrations/search/connection')).body.data.dataFrom).toBeNull();
    await ctx.app.worker.tick(); // the scheduler queues the next run, due now
    await runJobs();
    expect((await api.get('/v1/integrations/search/connection')).body.data).toMatchObject({ dataFrom: old, dataThrough: old });
  });

  it('a refused credential (401) stops the sync with status error until a new PUT; with nothing synced the data endpoints answer 424', async () => {
    const api = await ctx.site();
    const property = await connect(api);
    fake.fail(401, 1, 'query');
    await runJobs();
    const conn = (await api.get('/v1/integrations/search/connection')).body.data;
    expect(conn).toMatchObject({ status: 'error', lastError: expect.stringContaining('401') });
    for (const path of DATA) {
      const res = await api.get(path);
      expect(res.status, path).toBe(424);
      expectErrorShape(res.body, 424, 'integration_failed');
    }
    expectErrorShape((await api.post('/v1/integrations/search/sync')).body, 424, 'integration_failed');
    // Nothing is rescheduled: the scheduler leaves it alone.
    const before = fake.requests.length;
    await ctx.app.worker.tick();
    await runJobs();
    expect(fake.requests.slice(before).filter((r) => r.path.includes(encodeURIComponent(property)))).toEqual([]);
    // A new PUT starts over.
    fake.setDay(property, D, { totals: { clicks: 3, impressions: 30, position: 1 }, query: [], page: [] });
    await connect(api, property);
    await runJobs();
    expect((await api.get('/v1/integrations/search/stats?period=7d')).body.data).toMatchObject({ clicks: 3, dataThrough: D });
  });

  it('keeps answering stored rows when a later sync is refused', async () => {
    const { api } = await fixtureSite();
    fake.fail(403, 1, 'query');
    await api.post('/v1/integrations/search/sync');
    await runJobs();
    expect((await api.get('/v1/integrations/search/connection')).body.data.status).toBe('error');
    expect((await api.get('/v1/integrations/search/stats?period=7d')).body.data.clicks).toBe(60);
  });

  it('backs off on 429 (honouring Retry-After) and 5xx, keeping the connection, then completes', async () => {
    const api = await ctx.site();
    const property = uniqueProperty();
    fake.setDay(property, D, { totals: { clicks: 9, impressions: 90, position: 2 }, query: [q('x', 9, 90, 2)], page: [] });
    await connect(api, property);
    fake.fail(429, 1, 'query', 120);
    const at = Date.now();
    await runJobs();
    const job = await db().selectFrom('jobs').selectAll().where('site_id', '=', api.siteId).executeTakeFirstOrThrow();
    expect(Date.parse(job.run_at) - at).toBeGreaterThanOrEqual(119_000);
    expect(job.last_error).toContain('429');
    expect((await api.get('/v1/integrations/search/connection')).body.data.status).toBe('syncing');
    fake.fail(500, 1, 'query');
    await db()
      .updateTable('jobs')
      .set({ run_at: new Date(0).toISOString() })
      .where('id', '=', job.id)
      .execute();
    await runJobs();
    const again = await db().selectFrom('jobs').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
    expect(again.last_error).toContain('500');
    await db()
      .updateTable('jobs')
      .set({ run_at: new Date(0).toISOString() })
      .where('id', '=', job.id)
      .execute();
    await runJobs();
    expect((await api.get('/v1/integrations/search/connection')).body.data).toMatchObject({ status: 'ok', dataThrough: D });
  });

  it('disconnecting deletes the credentials and every synced row', async () => {
    const { api } = await fixtureSite();
    const res = await api.delete('/v1/integrations/search/connection');
    expect(res.status).toBe(200);
    expect(res.body.message).toEqual(expect.any(String));
    expect(await counts(api.siteId)).toEqual({ rows: 0, totals: 0, keys: 0 });
    expect((await api.get('/v1/integrations/search/stats')).status).toBe(409);
  });
});

describe('search console: links (decisions SC4)', () => {
  it("counts the links of the site's own published contents and page blocks: distinct records per target, internal on the domain, drafts and global blocks left out", async () => {
    const api = await ctx.site();
    await connect(api);
    const post = async (slug: string, body: string, status = 'published') => {
      const res = await api.post('/v1/contents', { type: 'post', title: slug, slug, bodyMarkdown: body, status });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.data ?? res.body;
    };
    await post('one', '[GitHub](https://github.com/acme) and [again](https://github.com/acme#readme) and [pricing](/pricing)');
    await post('two', '[GitHub](https://github.com/acme), [docs](https://docs.example.org/x) and [us](https://example.test/pricing#plans)');
    await post('three', '[GitHub](https://github.com/acme) only in a draft', 'draft');
    // Page blocks count once published; global blocks never.
    const blockWith = async (name: string, type: 'page' | 'global', publish: boolean) => {
      const slug = (await api.post('/v1/site-blocks', { name, type, ...(type === 'page' ? { path: `/${name}` } : {}), schema: [{ name: 'cta', type: 'url' }] }))
        .body.data.slug;
      expect((await api.put(`/v1/site-blocks/${slug}/data`, { data: { cta: 'https://github.com/acme' } })).status).toBe(200);
      if (publish) expect((await api.post(`/v1/site-blocks/${slug}/publish`)).status).toBe(200);
    };
    await blockWith('landing', 'page', true);
    await blockWith('unpublished', 'page', false);
    await blockWith('footer', 'global', true);
    const res = await api.get('/v1/integrations/search/links?period=90d');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        externalLinks: [
          { targetUrl: 'https://github.com/acme', count: 3 },
          { targetUrl: 'https://docs.example.org/x', count: 1 },
        ],
        internalLinks: [{ targetUrl: 'https://example.test/pricing', count: 2 }],
      },
    });
  });
});

describe('search console: search indexing (decisions SC6)', () => {
  it('sends URL_UPDATED for contents published after it was enabled, at most the daily quota, and logs each', async () => {
    const api = await ctx.site();
    const property = uniqueProperty();
    fake.properties.set(property, 'siteOwner');
    expect((await api.put('/v1/integrations/search/connection', { propertyUrl: property, credentials: fake.refreshToken() })).status).toBe(200);
    expect((await api.put('/v1/seo/settings', { searchIndexingEnabled: true })).status).toBe(200);
    for (const slug of ['first', 'second', 'third']) {
      await new Promise((r) => setTimeout(r, 5));
      expect((await api.post('/v1/contents', { type: 'post', title: slug, slug, bodyMarkdown: 'x', status: 'published' })).status).toBe(201);
    }
    const before = fake.published.length;
    await ctx.app.worker.tick();
    await ctx.app.worker.tick();
    const mine = fake.published.slice(before).filter((p) => p.url.startsWith('https://example.test/blog/'));
    // The quota is 2 a Pacific day: the third waits for tomorrow.
    expect(mine).toEqual([
      { url: 'https://example.test/blog/first', type: 'URL_UPDATED' },
      { url: 'https://example.test/blog/second', type: 'URL_UPDATED' },
    ]);
    const logs = await api.get('/v1/seo/search-indexing/logs');
    expect(logs.status).toBe(200);
    expect(logs.body.data.map((l: { url: string; type: string; status: string; error: null }) => [l.url, l.type, l.status, l.error])).toEqual([
      ['https://example.test/blog/second', 'URL_UPDATED', 'success', null],
      ['https://example.test/blog/first', 'URL_UPDATED', 'success', null],
    ]);
    expect(logs.body.meta.total).toBe(2);
    expect((await api.get('/v1/seo/search-indexing/stats')).body).toEqual({ total: 2, success: 2, failed: 0, lastSubmittedAt: expect.any(String) });
  });
});

describe('secrets rotation over every encrypted column (decisions H25, SC1)', () => {
  it('re-encrypts webhook secrets, the captcha secret and search-console credentials under the new key, each still readable', async () => {
    const api = await ctx.site();
    await connect(api);
    const hook = (await api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['content.published'] })).body.data;
    expect((await api.put('/v1/spam/settings', { captchaProvider: 'turnstile', captchaSiteKey: 'site-key', captchaSecret: 'captcha-secret' })).status).toBe(
      200,
    );
    const read = async () => ({
      webhook: (await db().selectFrom('webhooks').select('secret').where('id', '=', hook.id).executeTakeFirstOrThrow()).secret,
      captcha: (await db().selectFrom('spam_settings').select('captcha_secret').where('site_id', '=', api.siteId).executeTakeFirstOrThrow()).captcha_secret!,
      credentials: (await db().selectFrom('search_connections').select('credentials').where('site_id', '=', api.siteId).executeTakeFirstOrThrow()).credentials,
    });
    const old = new SecretBox(parseKey(TEST_SECRET_KEY, 'old'));
    const before = await read();
    for (const v of Object.values(before)) expect(v.startsWith(`enc:v1:${old.keyId}:`)).toBe(true);
    const plain = { webhook: old.decrypt(before.webhook), captcha: old.decrypt(before.captcha), credentials: old.decrypt(before.credentials) };
    expect(plain.webhook).toBe(hook.secret);
    expect(plain.captcha).toBe('captcha-secret');
    expect(JSON.parse(plain.credentials)).toMatchObject({ type: 'service_account', client_email: expect.any(String) });

    const newKey = randomBytes(32);
    const rotated = await reencryptSecrets(db(), new SecretBox(newKey, [parseKey(TEST_SECRET_KEY, 'old')]));
    expect(rotated.tables.search_connections!.rotated).toBeGreaterThanOrEqual(1);
    const onlyNew = new SecretBox(newKey);
    const after = await read();
    for (const v of Object.values(after)) expect(v.startsWith(`enc:v1:${onlyNew.keyId}:`)).toBe(true);
    expect({ webhook: onlyNew.decrypt(after.webhook), captcha: onlyNew.decrypt(after.captcha), credentials: onlyNew.decrypt(after.credentials) }).toEqual(
      plain,
    );
    expect((await reencryptSecrets(db(), new SecretBox(newKey))).rotated).toBe(0);
    // Back under the app's key, for whatever runs after.
    await reencryptSecrets(db(), new SecretBox(parseKey(TEST_SECRET_KEY, 'old'), [newKey]));
  });
});
