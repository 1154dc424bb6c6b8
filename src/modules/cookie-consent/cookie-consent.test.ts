import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { client, expect422, expectErrorShape } from '../../../test/helpers/http.js';
import { type SiteClient, useTestApp } from '../../../test/helpers/suite.js';
import { localDay } from '../../shared/periods.js';

const ctx = useTestApp();

async function keyOf(api: SiteClient): Promise<string> {
  return (await api.get('/v1/site/info')).body.data.publicKey;
}

/** A site with the banner enabled, and a poster of public records from a given address. */
async function enabledSite(locales?: string[], settings: Record<string, unknown> = {}) {
  const api = await ctx.site(locales);
  const put = await api.put('/v1/cookie-consent/settings', { enabled: true, ...settings });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const key = await keyOf(api);
  const post = (body: unknown, opts: { ip?: string; headers?: Record<string, string>; raw?: string } = {}) =>
    ctx.app.inject({
      method: 'POST',
      url: `/v1/public/cookie-consent/consents?siteKey=${key}`,
      remoteAddress: opts.ip ?? '203.0.113.77',
      headers: { 'content-type': 'application/json', ...opts.headers },
      payload: opts.raw ?? JSON.stringify(body),
    });
  return { api, key, post };
}

const choice = (categories: string[], extra: Record<string, unknown> = {}) => ({ consentId: randomUUID(), categories, revision: 1, ...extra });

describe('cookie consent settings (decisions CC1, CC2)', () => {
  it('answers the defaults before the first PUT', async () => {
    const api = await ctx.site();
    const res = await api.get('/v1/cookie-consent/settings');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      enabled: false,
      mode: 'opt-in',
      showRejectAll: true,
      position: 'bottom',
      layout: 'banner',
      theme: 'light',
      primaryColor: '#2563eb',
      borderRadius: 8,
      fontSize: 14,
      showSettingsButton: true,
      styleOverrides: {},
      texts: {
        title: 'We use cookies',
        description: 'We use cookies to make this site work and, with your consent, to understand how it is used and to show relevant ads.',
        acceptAll: 'Accept all',
        rejectAll: 'Reject all',
        customize: 'Customize',
        save: 'Save preferences',
        preferencesTitle: 'Cookie preferences',
        preferencesDescription: 'Choose which cookies this site may use. Necessary cookies are always on.',
      },
      services: [],
      privacyPolicyUrl: null,
      cookiePolicyUrl: null,
      categories: [
        { key: 'necessary', label: 'Necessary', description: 'Needed for the site to work.', required: true, defaultEnabled: true },
        { key: 'analytics', label: 'Analytics', description: 'Help us understand how the site is used.', required: false, defaultEnabled: false },
        { key: 'marketing', label: 'Marketing', description: 'Used to show relevant ads.', required: false, defaultEnabled: false },
      ],
      translations: {},
      logRetentionDays: 365,
      revision: 1,
      updatedAt: null,
    });
  });

  it('takes each number at its bounds and refuses one past them, naming the field; a refused PUT changes nothing', async () => {
    const api = await ctx.site();
    const before = (await api.get('/v1/cookie-consent/settings')).body.data;
    for (const [field, bad] of [
      ['fontSize', 10],
      ['fontSize', 18],
      ['fontSize', 14.5],
      ['borderRadius', -1],
      ['borderRadius', 51],
      ['logRetentionDays', -1],
      ['logRetentionDays', 3651],
    ] as const) {
      expect422(await api.put('/v1/cookie-consent/settings', { [field]: bad, enabled: true }), 'VALIDATION_FAILED', [field], `${field}=${bad}`);
    }
    expect((await api.get('/v1/cookie-consent/settings')).body.data).toEqual(before);
    for (const [field, good] of [
      ['fontSize', 11],
      ['fontSize', 17],
      ['borderRadius', 0],
      ['borderRadius', 50],
      ['logRetentionDays', 0],
      ['logRetentionDays', 3650],
    ] as const) {
      const res = await api.put('/v1/cookie-consent/settings', { [field]: good });
      expect(res.status, `${field}=${good}`).toBe(200);
      expect(res.body.data[field]).toBe(good);
    }
  });

  it('checks enums, the colour, URLs and the empty body', async () => {
    const api = await ctx.site();
    for (const [field, bad] of [
      ['mode', 'opt-maybe'],
      ['position', 'left'],
      ['layout', 'popup'],
      ['theme', 'blue'],
      ['primaryColor', '#12345'],
      ['primaryColor', 'red'],
      ['privacyPolicyUrl', 'javascript:alert(1)'],
      ['cookiePolicyUrl', 'privacy'],
    ] as const) {
      expect422(await api.put('/v1/cookie-consent/settings', { [field]: bad }), 'VALIDATION_FAILED', [field], `${field}=${bad}`);
    }
    expect422(await api.put('/v1/cookie-consent/settings', {}), 'VALIDATION_FAILED', ['body']);
    // Read-only and unknown fields are dropped, not stored.
    expect((await api.put('/v1/cookie-consent/settings', { revision: 99, fontSize: 12, junk: 1 })).body.data).toMatchObject({ revision: 1, fontSize: 12 });
    expect((await api.put('/v1/cookie-consent/settings', { revision: 99 })).body.data.revision).toBe(1);
    const stored = await ctx.app.database.db
      .selectFrom('cookie_consent_settings')
      .select('settings')
      .where('site_id', '=', api.siteId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored.settings)).not.toMatch(/junk|revision/);
    for (const mode of ['opt-in', 'opt-out', 'notice-only']) expect((await api.put('/v1/cookie-consent/settings', { mode })).body.data.mode).toBe(mode);
    for (const position of ['bottom', 'top', 'center', 'bottom-left', 'bottom-right'])
      expect((await api.put('/v1/cookie-consent/settings', { position })).body.data.position).toBe(position);
    const ok = await api.put('/v1/cookie-consent/settings', {
      primaryColor: '#ABC',
      layout: 'modal',
      theme: 'auto',
      privacyPolicyUrl: '/privacy',
      cookiePolicyUrl: 'https://example.test/cookies',
    });
    expect(ok.body.data).toMatchObject({
      primaryColor: '#abc',
      layout: 'modal',
      theme: 'auto',
      privacyPolicyUrl: '/privacy',
      cookiePolicyUrl: 'https://example.test/cookies',
    });
    expect((await api.put('/v1/cookie-consent/settings', { primaryColor: '#1A2B3C' })).body.data.primaryColor).toBe('#1a2b3c');
  });

  it('checks texts at their bounds, merges them and drops unknown keys', async () => {
    const api = await ctx.site();
    for (const [field, bad] of [
      ['title', ''],
      ['title', 'x'.repeat(201)],
      ['description', 'x'.repeat(2001)],
      ['acceptAll', 'x'.repeat(51)],
      ['save', ''],
      ['preferencesTitle', 'x'.repeat(201)],
    ] as const) {
      expect422(await api.put('/v1/cookie-consent/settings', { texts: { [field]: bad } }), 'VALIDATION_FAILED', [`texts.${field}`], `${field}`);
    }
    const res = await api.put('/v1/cookie-consent/settings', {
      texts: { title: 'x'.repeat(200), acceptAll: 'y'.repeat(50), preferencesTitle: '', evil: '<b>' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.texts).toMatchObject({ title: 'x'.repeat(200), acceptAll: 'y'.repeat(50), preferencesTitle: '', rejectAll: 'Reject all' });
    expect(res.body.data.texts).not.toHaveProperty('evil');
  });

  it("takes only the banner library's CSS variables, with safe values", async () => {
    const api = await ctx.site();
    for (const value of ['red;}', 'url(https://evil.test/x.png)', 'expression(alert(1))', '@import "x"', 'a<b', 'x\\y', 'x'.repeat(101), '']) {
      expect422(await api.put('/v1/cookie-consent/settings', { styleOverrides: { '--cc-bg': value } }), 'VALIDATION_FAILED', ['styleOverrides.--cc-bg'], value);
    }
    expect422(await api.put('/v1/cookie-consent/settings', { styleOverrides: { '--cc-made-up': 'red' } }), 'VALIDATION_FAILED', [
      'styleOverrides.--cc-made-up',
    ]);
    expect422(await api.put('/v1/cookie-consent/settings', { styleOverrides: { color: 'red' } }), 'VALIDATION_FAILED', ['styleOverrides.color']);
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`--cc-x${i}`, 'red']));
    expect422(await api.put('/v1/cookie-consent/settings', { styleOverrides: many }), 'VALIDATION_FAILED', ['styleOverrides']);
    const ok = await api.put('/v1/cookie-consent/settings', {
      styleOverrides: { '--cc-bg': '#fff', '--cc-font-family': 'Georgia, "Times New Roman", serif', '--cc-btn-primary-bg': 'x'.repeat(100) },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(Object.keys(ok.body.data.styleOverrides)).toEqual(['--cc-bg', '--cc-font-family', '--cc-btn-primary-bg']);
  });

  it('checks categories and services: counts, keys, unique keys, known categories', async () => {
    const api = await ctx.site();
    const cat = (key: string, extra: Record<string, unknown> = {}) => ({ key, label: key.toUpperCase(), ...extra });
    expect422(await api.put('/v1/cookie-consent/settings', { categories: [] }), 'VALIDATION_FAILED', ['categories']);
    const twentyOne = Array.from({ length: 21 }, (_, i) => cat(`c${i}`));
    expect422(await api.put('/v1/cookie-consent/settings', { categories: twentyOne }), 'VALIDATION_FAILED', ['categories']);
    expect((await api.put('/v1/cookie-consent/settings', { categories: twentyOne.slice(0, 20) })).status).toBe(200);
    expect422(await api.put('/v1/cookie-consent/settings', { categories: [cat('Bad Key')] }), 'VALIDATION_FAILED', ['categories[0].key']);
    expect422(await api.put('/v1/cookie-consent/settings', { categories: [cat('a'), cat('a')] }), 'VALIDATION_FAILED', ['categories[1].key']);
    expect422(await api.put('/v1/cookie-consent/settings', { categories: [cat('a', { label: '' })] }), 'VALIDATION_FAILED', ['categories[0].label']);
    const base = [cat('necessary', { required: true }), cat('stats')];
    const svc = (key: string, category: string) => ({ key, name: key, category, cookies: [{ name: '_ga', duration: '2 years' }] });
    expect422(
      await api.put('/v1/cookie-consent/settings', { categories: base, services: [svc('matomo', 'stats'), svc('ads', 'marketing')] }),
      'CONSENT_CATEGORY_UNKNOWN',
      ['services[1].category'],
    );
    expect422(
      await api.put('/v1/cookie-consent/settings', { categories: base, services: [svc('matomo', 'stats'), svc('matomo', 'stats')] }),
      'VALIDATION_FAILED',
      ['services[1].key'],
    );
    const tooMany = Array.from({ length: 101 }, (_, i) => svc(`s${i}`, 'stats'));
    expect422(await api.put('/v1/cookie-consent/settings', { categories: base, services: tooMany }), 'VALIDATION_FAILED', ['services']);
    const ok = await api.put('/v1/cookie-consent/settings', { categories: base, services: tooMany.slice(0, 100) });
    expect(ok.status).toBe(200);
    expect(ok.body.data.services).toHaveLength(100);
    expect(ok.body.data.services[0]).toEqual({
      key: 's0',
      name: 's0',
      category: 'stats',
      description: null,
      cookies: [{ name: '_ga', duration: '2 years', description: null }],
    });
    expect(ok.body.data.categories).toEqual([
      { key: 'necessary', label: 'NECESSARY', description: null, required: true, defaultEnabled: true },
      { key: 'stats', label: 'STATS', description: null, required: false, defaultEnabled: false },
    ]);
    // Removing a category that services name is refused on the service.
    expect422(await api.put('/v1/cookie-consent/settings', { categories: [cat('necessary', { required: true })] }), 'CONSENT_CATEGORY_UNKNOWN', [
      'services[0].category',
    ]);
  });

  it('takes translations for enabled locales only, naming configured categories and services', async () => {
    const api = await ctx.site(['en', 'de']);
    expect422(await api.put('/v1/cookie-consent/settings', { translations: { fr: { texts: { title: 'Cookies' } } } }), 'LOCALE_NOT_ENABLED', [
      'translations.fr',
    ]);
    expect422(
      await api.put('/v1/cookie-consent/settings', { translations: { de: { categories: { ads: { label: 'Werbung' } } } } }),
      'CONSENT_CATEGORY_UNKNOWN',
      ['translations.de.categories.ads'],
    );
    expect422(await api.put('/v1/cookie-consent/settings', { translations: { de: { texts: { title: '' } } } }), 'VALIDATION_FAILED', [
      'translations.de.texts.title',
    ]);
    const ok = await api.put('/v1/cookie-consent/settings', {
      translations: { de: { texts: { title: 'Wir verwenden Cookies' }, categories: { analytics: { label: 'Statistik' } } } },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.translations).toEqual({ de: { texts: { title: 'Wir verwenden Cookies' }, categories: { analytics: { label: 'Statistik' } } } });
  });

  it("bumps revision when category keys, a category's required or service keys change, and not for texts or style", async () => {
    const api = await ctx.site();
    const rev = async (body: Record<string, unknown>) => {
      const res = await api.put('/v1/cookie-consent/settings', body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.revision;
    };
    const defaults = (await api.get('/v1/cookie-consent/settings')).body.data.categories;
    expect(await rev({ primaryColor: '#000000', texts: { title: 'New' }, theme: 'dark', fontSize: 12 })).toBe(1);
    expect(await rev({ categories: [...defaults, { key: 'social', label: 'Social' }] })).toBe(2);
    expect(await rev({ categories: [...defaults, { key: 'social', label: 'Social media', description: 'Share buttons' }] })).toBe(2);
    expect(await rev({ categories: [...defaults, { key: 'social', label: 'Social', required: true }] })).toBe(3);
    expect(await rev({ services: [{ key: 'yt', name: 'YouTube', category: 'social' }] })).toBe(4);
    expect(await rev({ services: [{ key: 'yt', name: 'YouTube videos', category: 'marketing' }] })).toBe(4);
    expect(await rev({ enabled: true, mode: 'opt-out' })).toBe(4);
  });
});

describe('the public config (decisions CC3, G19)', () => {
  it('needs a site key, is 404 while disabled, and answers with ETag, 304 and CORS for the site', async () => {
    const api = await ctx.site();
    const key = await keyOf(api);
    const anon = client(ctx.app);
    const noKey = await anon.get('/v1/public/cookie-consent/config');
    expect(noKey.status).toBe(401);
    expectErrorShape(noKey.body, 401, 'SITE_KEY_INVALID');
    expect((await anon.get(`/v1/public/cookie-consent/config?siteKey=${key}`)).status).toBe(404);
    await api.put('/v1/cookie-consent/settings', { enabled: true });
    const res = await anon.get(`/v1/public/cookie-consent/config?siteKey=${key}`, { origin: 'https://example.test' });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://example.test');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.body.data).toMatchObject({ enabled: true, mode: 'opt-in', revision: 1, locale: 'en', texts: { title: 'We use cookies' } });
    expect(res.body.data.categories.map((c: { key: string }) => c.key)).toEqual(['necessary', 'analytics', 'marketing']);
    expect(res.body.data).not.toHaveProperty('logRetentionDays');
    expect(res.body.data).not.toHaveProperty('translations');
    const etag = String(res.headers.etag);
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    const same = await anon.get(`/v1/public/cookie-consent/config?siteKey=${key}`, { 'if-none-match': etag });
    expect(same.status).toBe(304);
    expect(same.text).toBe('');
    const elsewhere = await anon.get('/v1/public/cookie-consent/config', { 'x-site-key': key, origin: 'https://evil.test' });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers['access-control-allow-origin']).toBeUndefined();
    // A change answers a new ETag at once.
    await api.put('/v1/cookie-consent/settings', { texts: { title: 'Cookies here' } });
    const changed = await anon.get(`/v1/public/cookie-consent/config?siteKey=${key}`, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.body.data.texts.title).toBe('Cookies here');
    await api.put('/v1/cookie-consent/settings', { enabled: false });
    expect((await anon.get(`/v1/public/cookie-consent/config?siteKey=${key}`)).status).toBe(404);
  });

  it('answers the asked locale, else its language, else the site default, with translated labels', async () => {
    const { key } = await enabledSite(['en', 'de'], {
      translations: { de: { texts: { title: 'Wir verwenden Cookies' }, categories: { analytics: { label: 'Statistik' } } } },
    });
    const anon = client(ctx.app);
    const get = async (locale: string) => (await anon.get(`/v1/public/cookie-consent/config?siteKey=${key}&locale=${locale}`)).body.data;
    for (const asked of ['de', 'de-AT', 'DE-at']) {
      const de = await get(asked);
      expect(de.locale, asked).toBe('de');
      expect(de.texts).toMatchObject({ title: 'Wir verwenden Cookies', acceptAll: 'Accept all' });
      expect(de.categories[1]).toMatchObject({ key: 'analytics', label: 'Statistik', description: 'Help us understand how the site is used.' });
    }
    for (const asked of ['fr', 'not a locale!', 'en-GB']) {
      const en = await get(encodeURIComponent(asked));
      expect(en.locale, asked).toBe('en');
      expect(en.texts.title).toBe('We use cookies');
    }
  });

  it("another site's key never sees this site's config", async () => {
    const a = await enabledSite(undefined, { texts: { title: 'Site A banner' } });
    const b = await ctx.site();
    const keyB = await keyOf(b);
    const anon = client(ctx.app);
    expect((await anon.get(`/v1/public/cookie-consent/config?siteKey=${a.key}`)).body.data.texts.title).toBe('Site A banner');
    expect((await anon.get(`/v1/public/cookie-consent/config?siteKey=${keyB}`)).status).toBe(404);
    await b.put('/v1/cookie-consent/settings', { enabled: true });
    expect((await anon.get(`/v1/public/cookie-consent/config?siteKey=${keyB}`)).body.data.texts.title).toBe('We use cookies');
  });

  it('serves the banner script and CSS with a strong ETag, nosniff and their content types', async () => {
    const api = await ctx.site();
    const key = await keyOf(api);
    const anon = client(ctx.app);
    const js = await anon.get(`/v1/public/cookie-consent/banner.js?siteKey=${key}`);
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    expect(js.headers['cache-control']).toBe('public, max-age=3600');
    expect(js.text).toContain('CookieConsent 3.1.0');
    expect(js.text).toContain("base + 'consents' + query");
    expect((await anon.get(`/v1/public/cookie-consent/banner.js?siteKey=${key}`, { 'if-none-match': String(js.headers.etag) })).status).toBe(304);
    const css = await anon.get(`/v1/public/cookie-consent/banner.css?siteKey=${key}`);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.text).toContain('#cc-main');
    expect((await anon.get('/v1/public/cookie-consent/banner.js')).status).toBe(401);
  });
});

describe('consent records (decisions CC3, CC4)', () => {
  it('are refused with 409 while disabled, storing nothing', async () => {
    const api = await ctx.site();
    const key = await keyOf(api);
    const res = await ctx.app.inject({ method: 'POST', url: `/v1/public/cookie-consent/consents?siteKey=${key}`, payload: choice(['necessary']) });
    expect(res.statusCode).toBe(409);
    expectErrorShape(res.json(), 409, 'COOKIE_CONSENT_DISABLED');
    await api.put('/v1/cookie-consent/settings', { logRetentionDays: 30 });
    expect((await api.get('/v1/cookie-consent/logs')).body.meta.total).toBe(0);
    expect((await api.get('/v1/cookie-consent/stats')).body.totalInteractions).toBe(0);
  });

  it('derive the action, drop unknown keys, add required ones, and count into the stats', async () => {
    const { api, post } = await enabledSite();
    const sent = [
      [['necessary', 'analytics', 'marketing'], 'accept_all', ['necessary', 'analytics', 'marketing']],
      [['analytics', 'marketing'], 'accept_all', ['necessary', 'analytics', 'marketing']],
      [['necessary'], 'reject_all', ['necessary']],
      [[], 'reject_all', ['necessary']],
      [['necessary', 'analytics', 'tracking-pixel'], 'custom', ['necessary', 'analytics']],
    ] as const;
    for (const [categories, action, stored] of sent) {
      const res = await post(choice([...categories], { action: 'accept_all' }));
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data).toMatchObject({ action, categories: stored, revision: 1 });
    }
    const stats = await api.get('/v1/cookie-consent/stats');
    expect(stats.status).toBe(200);
    const today = localDay(new Date(), 'UTC');
    expect(stats.body).toEqual({
      totalInteractions: 5,
      acceptAll: 2,
      rejectAll: 2,
      custom: 1,
      byCategory: { necessary: 5, analytics: 3, marketing: 2 },
      startDate: new Date(Date.parse(`${today}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10),
      endDate: today,
    });
  });

  it('keep the proof: consent id, revision, locale, the page without query, the truncated address, the user agent', async () => {
    const { api, post } = await enabledSite(undefined, { services: [{ key: 'matomo', name: 'Matomo', category: 'analytics' }] });
    const id = randomUUID().toUpperCase();
    const res = await post(
      choice(['analytics'], {
        consentId: id,
        revision: 7,
        locale: 'de-at',
        pageUrl: 'https://example.test/pricing?utm_source=x#plans',
        services: { analytics: ['matomo', 'unknown'], marketing: ['ads'] },
      }),
      { headers: { 'user-agent': `Mozilla/5.0 ${'x'.repeat(600)}` } },
    );
    expect(res.statusCode, res.body).toBe(201);
    const v6 = await post(choice(['necessary']), { ip: '2001:db8:1234:5678:9abc:def0:1234:5678' });
    expect(v6.statusCode).toBe(201);
    const mapped = await post(choice(['necessary']), { ip: '::ffff:198.51.100.200' });
    expect(mapped.statusCode).toBe(201);
    const logs = (await api.get('/v1/cookie-consent/logs?sortOrder=asc')).body.data;
    expect(logs).toHaveLength(3);
    expect(logs[0]).toMatchObject({
      consentId: id.toLowerCase(),
      action: 'custom',
      categories: ['necessary', 'analytics'],
      services: { analytics: ['matomo'] },
      revision: 7,
      locale: 'de-AT',
      pageUrl: 'https://example.test/pricing',
      ipAddress: '203.0.113.0',
    });
    expect(logs[0].userAgent).toHaveLength(500);
    expect(logs[1].ipAddress).toBe('2001:db8:1234::');
    expect(logs[2].ipAddress).toBe('198.51.100.0');
    // The whole address is stored nowhere, hashed or not.
    const raw = await ctx.app.database.db.selectFrom('cookie_consents').selectAll().where('consent_id', '=', id.toLowerCase()).execute();
    expect(JSON.stringify(raw)).not.toContain('203.0.113.77');
  });

  it('take JSON sent as text/plain (beacons) and refuse bad bodies with 4xx, storing nothing', async () => {
    const { api, post } = await enabledSite();
    const beacon = await post(null, { raw: JSON.stringify(choice(['analytics'])), headers: { 'content-type': 'text/plain;charset=UTF-8' } });
    expect(beacon.statusCode, beacon.body).toBe(201);
    expect(beacon.json().data.action).toBe('custom');
    expect((await post(null, { raw: '{not json', headers: { 'content-type': 'text/plain' } })).statusCode).toBe(400);
    const bad = async (body: unknown, field: string) => {
      const res = await post(body);
      expect422({ status: res.statusCode, body: res.json() }, 'VALIDATION_FAILED', [field], field);
    };
    await bad({ categories: [], revision: 1 }, 'consentId');
    await bad(choice([], { consentId: 'abc' }), 'consentId');
    await bad(choice([], { revision: -1 }), 'revision');
    await bad(choice([], { revision: '1' }), 'revision');
    await bad(choice(Array.from({ length: 51 }, (_, i) => `c${i}`)), 'categories');
    await bad(choice(['x'.repeat(51)]), 'categories[0]');
    await bad({ consentId: randomUUID(), revision: 1 }, 'categories');
    const big = await post(null, { raw: JSON.stringify(choice([], { pageUrl: `https://example.test/${'x'.repeat(17_000)}` })) });
    expect(big.statusCode).toBe(413);
    expect((await api.get('/v1/cookie-consent/logs')).body.meta.total).toBe(1);
  });

  it('store a page URL cut at 2,048 characters; notice-only records are always accept_all', async () => {
    const { api, post } = await enabledSite(undefined, { mode: 'notice-only' });
    const long = `https://example.test/${'p'.repeat(3000)}`;
    const res = await post(choice([], { pageUrl: long }));
    expect(res.json().data).toMatchObject({ action: 'accept_all', categories: ['necessary', 'analytics', 'marketing'] });
    const [log] = (await api.get('/v1/cookie-consent/logs')).body.data;
    expect(log.pageUrl).toBe(long.slice(0, 2048));
  });

  it("another site's key and token never see this site's records", async () => {
    const a = await enabledSite();
    const b = await enabledSite();
    const consentId = randomUUID();
    expect((await a.post(choice(['analytics'], { consentId }))).statusCode).toBe(201);
    expect((await b.api.get('/v1/cookie-consent/logs')).body.meta.total).toBe(0);
    expect((await b.api.get(`/v1/cookie-consent/logs?consentId=${consentId}`)).body.data).toEqual([]);
    expect((await b.api.get('/v1/cookie-consent/stats')).body.totalInteractions).toBe(0);
    expect((await b.api.get('/v1/cookie-consent/export')).text.trim().split('\r\n')).toHaveLength(1);
    expect((await a.api.get('/v1/cookie-consent/logs')).body.meta.total).toBe(1);
  });
});

describe('logs, export and stats (decisions CC4, A8, F2)', () => {
  it('filter logs by action, category, consent id, revision and dates, and page them', async () => {
    const { api, post } = await enabledSite(undefined, {
      categories: [
        { key: 'necessary', label: 'N', required: true },
        { key: 'a_b', label: 'AB' },
        { key: 'axb', label: 'AXB' },
      ],
    });
    const id = randomUUID();
    await post(choice(['a_b', 'axb'], { consentId: id }));
    await post(choice([], { consentId: id, revision: 2 }));
    await post(choice(['axb'], { revision: 2 }));
    const total = async (q: string) => {
      const res = await api.get(`/v1/cookie-consent/logs?${q}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.meta.total;
    };
    expect(await total('')).toBe(3);
    expect(await total('action=accept_all')).toBe(1);
    expect(await total('action=reject_all')).toBe(1);
    expect(await total('action=custom')).toBe(1);
    expect(await total('category=necessary')).toBe(3);
    expect(await total('category=axb')).toBe(2);
    // "_" is a key character, not a LIKE wildcard: a_b matches only a_b.
    expect(await total('category=a_b')).toBe(1);
    expect(await total('category=a')).toBe(0);
    expect(await total(`consentId=${id}`)).toBe(2);
    expect(await total('revision=2')).toBe(2);
    expect(await total(`consentId=${id}&revision=2`)).toBe(1);
    const today = new Date().toISOString().slice(0, 10);
    expect(await total(`dateFrom=${today}&dateTo=${today}`)).toBe(3);
    expect(await total('dateTo=2000-01-01')).toBe(0);
    const page = await api.get('/v1/cookie-consent/logs?limit=2&page=2');
    expect(page.body.meta).toEqual({ total: 3, perPage: 2, currentPage: 2, lastPage: 2 });
    expect(page.body.data).toHaveLength(1);
    const newest = (await api.get('/v1/cookie-consent/logs')).body.data;
    expect(newest.map((r: { categories: string[] }) => r.categories)).toEqual([['necessary', 'axb'], ['necessary'], ['necessary', 'a_b', 'axb']]);
    expect422(await api.get('/v1/cookie-consent/logs?limit=101'), 'VALIDATION_FAILED', ['limit']);
    expect422(await api.get('/v1/cookie-consent/logs?sortBy=ip_address'), 'VALIDATION_FAILED', ['sortBy']);
    expect422(await api.get('/v1/cookie-consent/logs?action=maybe'), 'VALIDATION_FAILED', ['action']);
    expect422(await api.get('/v1/cookie-consent/logs?consentId=nope'), 'VALIDATION_FAILED', ['consentId']);
  });

  it('export the records as CSV with formula cells neutralised, filtered like the logs', async () => {
    const { api, post } = await enabledSite();
    await post(choice(['analytics'], { pageUrl: '=HYPERLINK("https://evil.test","click")' }), { headers: { 'user-agent': '@SUM(1+1)' } });
    await post(choice([]), { headers: { 'user-agent': 'Plain, "quoted" agent' } });
    const res = await api.get('/v1/cookie-consent/export');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    const slug = (await api.get('/v1/site/info')).body.data.slug;
    expect(res.headers['content-disposition']).toBe(`attachment; filename="cookie-consents-${slug}-${localDay(new Date(), 'UTC')}.csv"`);
    const rows = parse(res.text.replace(/^\uFEFF/, '')) as string[][];
    expect(rows[0]).toEqual(['created_at', 'consent_id', 'action', 'categories', 'revision', 'locale', 'page_url', 'ip_address', 'user_agent']);
    expect(rows).toHaveLength(3);
    expect(rows[1]!.slice(2)).toEqual(['custom', 'necessary;analytics', '1', '', '\'=HYPERLINK("https://evil.test","click")', '203.0.113.0', "'@SUM(1+1)"]);
    expect(rows[2]!.slice(2)).toEqual(['reject_all', 'necessary', '1', '', '', '203.0.113.0', 'Plain, "quoted" agent']);
    const filtered = parse((await api.get('/v1/cookie-consent/export?action=reject_all')).text.replace(/^\uFEFF/, '')) as string[][];
    expect(filtered).toHaveLength(2);
    expect(filtered[1]![2]).toBe('reject_all');
  });

  it('take a period or two dates (A8), bounded, and list every configured category', async () => {
    const { api, post } = await enabledSite();
    await post(choice(['marketing']));
    const today = localDay(new Date(), 'UTC');
    const day = (offset: number) => new Date(Date.parse(`${today}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
    const stats = async (q: string) => {
      const res = await api.get(`/v1/cookie-consent/stats?${q}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    expect(await stats('period=7d')).toMatchObject({ totalInteractions: 1, custom: 1, startDate: day(-6), endDate: today });
    const [y, m] = today.split('-').map(Number) as [number, number];
    const firstOf = (back: number) => new Date(Date.UTC(y, m - 1 - back, 1)).toISOString().slice(0, 10);
    expect(await stats('period=3m')).toMatchObject({ startDate: firstOf(2), endDate: today });
    expect(await stats('period=12m')).toMatchObject({ startDate: firstOf(11), endDate: today, totalInteractions: 1 });
    expect(await stats(`startDate=${today}&endDate=${today}`)).toMatchObject({
      totalInteractions: 1,
      byCategory: { necessary: 1, analytics: 0, marketing: 1 },
    });
    expect(await stats(`startDate=${day(-3659)}&endDate=${today}`)).toMatchObject({ totalInteractions: 1 });
    expect(await stats('startDate=2020-01-01&endDate=2020-01-31')).toEqual({
      totalInteractions: 0,
      acceptAll: 0,
      rejectAll: 0,
      custom: 0,
      byCategory: { necessary: 0, analytics: 0, marketing: 0 },
      startDate: '2020-01-01',
      endDate: '2020-01-31',
    });
    expect422(await api.get(`/v1/cookie-consent/stats?startDate=${day(-3660)}&endDate=${today}`), 'DATE_RANGE_TOO_LONG', ['endDate']);
    expect422(await api.get(`/v1/cookie-consent/stats?period=7d&startDate=${today}&endDate=${today}`), 'DATE_RANGE_INVALID', ['period']);
    expect422(await api.get(`/v1/cookie-consent/stats?startDate=${today}`), 'DATE_RANGE_INVALID', ['endDate']);
    expect422(await api.get(`/v1/cookie-consent/stats?endDate=${today}`), 'DATE_RANGE_INVALID', ['startDate']);
    expect422(await api.get(`/v1/cookie-consent/stats?startDate=${day(1)}&endDate=${today}`), 'DATE_RANGE_INVALID', ['startDate']);
    expect422(await api.get('/v1/cookie-consent/stats?startDate=2026-02-30&endDate=2026-03-01'), 'VALIDATION_FAILED', ['startDate']);
    expect422(await api.get('/v1/cookie-consent/stats?period=5d'), 'VALIDATION_FAILED', ['period']);
  });

  it("count each record on the site's own calendar day", async () => {
    const { api, post } = await enabledSite();
    expect((await api.put('/v1/site/settings', { timezone: 'Pacific/Kiritimati' })).status).toBe(200);
    await post(choice([]));
    const local = localDay(new Date(), 'Pacific/Kiritimati');
    expect((await api.get(`/v1/cookie-consent/stats?startDate=${local}&endDate=${local}`)).body.totalInteractions).toBe(1);
    expect((await api.get('/v1/cookie-consent/stats?period=7d')).body.endDate).toBe(local);
  });

  it('delete records past logRetentionDays, while the stats keep counting them', async () => {
    const { api, post } = await enabledSite(undefined, { logRetentionDays: 1 });
    await post(choice(['analytics']));
    await post(choice([]));
    const db = ctx.app.database.db;
    const siteId = api.siteId;
    const [old] = await db.selectFrom('cookie_consents').select('id').where('site_id', '=', siteId).orderBy('id').limit(1).execute();
    await db
      .updateTable('cookie_consents')
      .set({ created_at: new Date(Date.now() - 2 * 86_400_000).toISOString() })
      .where('id', '=', old!.id)
      .execute();
    // A site that keeps its records for ever keeps them.
    const forever = await enabledSite(undefined, { logRetentionDays: 0 });
    await forever.post(choice([]));
    await db
      .updateTable('cookie_consents')
      .set({ created_at: new Date(Date.now() - 4000 * 86_400_000).toISOString() })
      .where('site_id', '=', forever.api.siteId)
      .execute();
    await ctx.app.worker.tick();
    const logs = (await api.get('/v1/cookie-consent/logs')).body;
    expect(logs.meta.total).toBe(1);
    expect(logs.data[0].action).toBe('reject_all');
    expect((await forever.api.get('/v1/cookie-consent/logs')).body.meta.total).toBe(1);
    expect((await api.get('/v1/cookie-consent/stats?period=7d')).body).toMatchObject({
      totalInteractions: 2,
      custom: 1,
      rejectAll: 1,
      byCategory: { analytics: 1 },
    });
  });
});
