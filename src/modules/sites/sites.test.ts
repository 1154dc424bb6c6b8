import { describe, expect, it } from 'vitest';
import { createSiteWithToken } from '../../../test/helpers/app.js';
import { client, expectErrorShape, type Client } from '../../../test/helpers/http.js';
import { useTestApp } from '../../../test/helpers/suite.js';

const ctx = useTestApp();

async function newSite(): Promise<{ api: Client; siteId: string }> {
  const site = await createSiteWithToken(ctx.app, { name: 'Acme Blog', domain: 'acme.test' });
  return { api: client(ctx.app, site.token), siteId: site.siteId };
}

describe('GET /v1/sites', () => {
  it('answers the one site of the token, never another', async () => {
    const { api, siteId } = await newSite();
    await newSite();
    const res = await api.get('/v1/sites');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toEqual({
      id: siteId,
      name: 'Acme Blog',
      domain: 'acme.test',
      slug: expect.stringMatching(/^acme-blog(-\d+)?$/),
      isActive: true,
      defaultLocale: 'en',
      enabledLocales: ['en'],
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
  });

  it('gives each new site a unique slug', async () => {
    const a = await newSite();
    const b = await newSite();
    const [sa, sb] = [(await a.api.get('/v1/sites')).body.data[0].slug, (await b.api.get('/v1/sites')).body.data[0].slug];
    expect(sa).not.toBe(sb);
  });
});

describe('GET /v1/site/info', () => {
  it('answers the basic info wrapped in data', async () => {
    const { api, siteId } = await newSite();
    const res = await api.get('/v1/site/info');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: {
        id: siteId,
        publicKey: expect.stringMatching(/^pk_[A-Za-z0-9_-]{24,}$/),
        name: 'Acme Blog',
        domain: 'acme.test',
        slug: expect.any(String),
        logoUrl: null,
        faviconUrl: null,
        isActive: true,
      },
    });
  });
});

describe('GET and PUT /v1/site/settings', () => {
  it('answers the bare settings object', async () => {
    const { api, siteId } = await newSite();
    const res = await api.get('/v1/site/settings');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: siteId,
      publicKey: (await api.get('/v1/site/info')).body.data.publicKey,
      name: 'Acme Blog',
      domain: 'acme.test',
      description: null,
      timezone: 'UTC',
      isActive: true,
      showBranding: true,
      previewUrl: null,
      organizationId: null,
    });
    expect(res.body).not.toHaveProperty('data');
  });

  it('updates only the given fields and bumps updatedAt', async () => {
    const { api } = await newSite();
    const before = (await api.get('/v1/site/settings')).body;
    await new Promise((r) => setTimeout(r, 5));
    const res = await api.put('/v1/site/settings', {
      name: 'Acme',
      description: 'All about anvils',
      logoUrl: 'https://cdn.acme.test/logo.png',
      timezone: 'Europe/Berlin',
      showBranding: false,
      previewUrl: 'https://preview.acme.test',
      isActive: false,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Acme',
      domain: 'acme.test',
      description: 'All about anvils',
      logoUrl: 'https://cdn.acme.test/logo.png',
      faviconUrl: null,
      timezone: 'Europe/Berlin',
      showBranding: false,
      previewUrl: 'https://preview.acme.test',
      isActive: false,
    });
    expect(res.body.updatedAt > before.updatedAt).toBe(true);
    expect((await api.get('/v1/site/settings')).body.timezone).toBe('Europe/Berlin');
    // An IANA alias that is not in the canonical list is a valid identifier too.
    expect((await api.put('/v1/site/settings', { timezone: 'America/Argentina/Buenos_Aires' })).status).toBe(200);
  });

  it('clears nullable fields with null', async () => {
    const { api } = await newSite();
    await api.put('/v1/site/settings', { description: 'x', faviconUrl: 'https://a.test/f.ico' });
    const res = await api.put('/v1/site/settings', { description: null, faviconUrl: null });
    expect(res.body.description).toBeNull();
    expect(res.body.faviconUrl).toBeNull();
  });

  it('takes a name and a domain of 255 characters and refuses 256', async () => {
    const { api } = await newSite();
    expect((await api.put('/v1/site/settings', { name: 'n'.repeat(255) })).status).toBe(200);
    const long = await api.put('/v1/site/settings', { name: 'n'.repeat(256) });
    expect(long.status).toBe(422);
    expect(long.body.errors).toHaveProperty('name');
    const label = 'a'.repeat(63);
    const domain255 = [label, label, label, `${'b'.repeat(60)}.io`].join('.');
    expect(domain255).toHaveLength(255);
    expect((await api.put('/v1/site/settings', { domain: domain255 })).status).toBe(200);
    const tooLong = await api.put('/v1/site/settings', { domain: `a${domain255}` });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors).toHaveProperty('domain');
  });

  it('refuses an empty name, a bad domain, a non-URL logo and an unknown timezone with 422', async () => {
    const { api } = await newSite();
    for (const [body, field] of [
      [{ name: '' }, 'name'],
      [{ domain: 'has space.test' }, 'domain'],
      [{ logoUrl: 'ftp://x/logo.png' }, 'logoUrl'],
      [{ previewUrl: 'not-a-url' }, 'previewUrl'],
      [{ timezone: 'Mars/Olympus' }, 'timezone'],
      [{ timezone: 'x'.repeat(101) }, 'timezone'],
      [{ showBranding: 'yes please' }, 'showBranding'],
      [{}, 'body'],
    ] as const) {
      const res = await api.put('/v1/site/settings', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expectErrorShape(res.body, 422);
      expect(Object.keys(res.body.errors), JSON.stringify(body)).toContain(field);
    }
    expect((await api.get('/v1/site/settings')).body.name).toBe('Acme Blog');
  });

  it('needs sites.update to change settings and sites.view to read them', async () => {
    const site = await createSiteWithToken(ctx.app, { scopes: ['sites.view'] });
    const api = client(ctx.app, site.token);
    expect((await api.get('/v1/site/settings')).status).toBe(200);
    const res = await api.put('/v1/site/settings', { name: 'Nope' });
    expect(res.status).toBe(403);
    expect((await api.get('/v1/site/settings')).body.name).not.toBe('Nope');
  });
});

describe('GET /v1/site/settings/timezones and /locales', () => {
  it('lists IANA timezones including UTC', async () => {
    const { api } = await newSite();
    const res = await api.get('/v1/site/settings/timezones');
    expect(res.status).toBe(200);
    expect(res.body.data).toContain('UTC');
    expect(res.body.data).toContain('Europe/Berlin');
    expect(res.body.data).toContain('America/New_York');
    expect(res.body.data.length).toBeGreaterThan(300);
  });

  it('lists locales with code, label, flag and direction', async () => {
    const { api } = await newSite();
    const res = await api.get('/v1/site/settings/locales');
    expect(res.status).toBe(200);
    const byCode = Object.fromEntries(res.body.data.map((l: any) => [l.code, l]));
    expect(byCode.en).toEqual({ code: 'en', label: 'English', flag: '🇬🇧', direction: 'ltr' });
    expect(byCode['pt-BR']).toEqual({ code: 'pt-BR', label: 'Brazilian Portuguese', flag: '🇧🇷', direction: 'ltr' });
    expect(byCode.ar.direction).toBe('rtl');
    expect(byCode.he.direction).toBe('rtl');
  });
});

describe('GET and PUT /v1/site/settings/language', () => {
  it('answers the language settings with every available locale flagged', async () => {
    const { api } = await newSite();
    const res = await api.get('/v1/site/settings/language');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ defaultLocale: 'en', multiLanguageEnabled: false, enabledLocales: ['en'] });
    const en = res.body.availableLocales.find((l: any) => l.code === 'en');
    const de = res.body.availableLocales.find((l: any) => l.code === 'de');
    expect(en.enabled).toBe(true);
    expect(de.enabled).toBe(false);
  });

  it('updates languages, canonicalises tags, and reports the redirect changes (none yet)', async () => {
    const { api } = await newSite();
    const res = await api.put('/v1/site/settings/language', { defaultLocale: 'DE', multiLanguageEnabled: true, enabledLocales: ['de', 'en', 'pt-br', 'en'] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      defaultLocale: 'de',
      multiLanguageEnabled: true,
      enabledLocales: ['de', 'en', 'pt-BR'],
      redirects: { created: 0, deleted: 0 },
    });
    expect(typeof res.body.message).toBe('string');
    expect((await api.get('/v1/sites')).body.data[0]).toMatchObject({ defaultLocale: 'de', enabledLocales: ['de', 'en', 'pt-BR'] });
  });

  it('refuses a default locale that is not enabled, invalid tags, and missing fields with 422', async () => {
    const { api } = await newSite();
    const notEnabled = await api.put('/v1/site/settings/language', { defaultLocale: 'fr', multiLanguageEnabled: true, enabledLocales: ['en', 'de'] });
    expect(notEnabled.status).toBe(422);
    expectErrorShape(notEnabled.body, 422, 'DEFAULT_LOCALE_NOT_ENABLED');
    expect(notEnabled.body.errors).toHaveProperty('defaultLocale');
    const invalidTag = await api.put('/v1/site/settings/language', { defaultLocale: 'en', multiLanguageEnabled: true, enabledLocales: ['en', 'not_a_tag!'] });
    expect(invalidTag.status).toBe(422);
    expect(invalidTag.body.errors).toHaveProperty(['enabledLocales[1]']);
    const missing = await api.put('/v1/site/settings/language', { defaultLocale: 'en' });
    expect(missing.status).toBe(422);
    expect(Object.keys(missing.body.errors).sort()).toEqual(['enabledLocales', 'multiLanguageEnabled']);
    const empty = await api.put('/v1/site/settings/language', { defaultLocale: 'en', multiLanguageEnabled: false, enabledLocales: [] });
    expect(empty.status).toBe(422);
    const several = await api.put('/v1/site/settings/language', { defaultLocale: 'en', multiLanguageEnabled: false, enabledLocales: ['en', 'de'] });
    expect(several.status).toBe(422);
    expect((await api.get('/v1/site/settings/language')).body.enabledLocales).toEqual(['en']);
  });
});

describe('GET and PUT /v1/site/settings/i18n-detection', () => {
  it('answers the detection settings', async () => {
    const { api } = await newSite();
    const res = await api.get('/v1/site/settings/i18n-detection');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      detectionMethod: 'none',
      redirectToDefault: false,
      hideDefaultLocale: true,
      detectionEnabled: false,
      detectionOrder: ['cookie', 'browser'],
      cookieName: 'cairn_locale',
      cookieMaxAge: 365,
    });
  });

  it('updates them and derives detectionMethod from the order', async () => {
    const { api } = await newSite();
    const res = await api.put('/v1/site/settings/i18n-detection', {
      detectionEnabled: true,
      detectionOrder: ['browser', 'geo'],
      cookieName: 'lang',
      cookieMaxAge: 3650,
      redirectToDefault: true,
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      detectionMethod: 'browser',
      detectionEnabled: true,
      detectionOrder: ['browser', 'geo'],
      cookieName: 'lang',
      cookieMaxAge: 3650,
      redirectToDefault: true,
      hideDefaultLocale: true,
    });
    expect((await api.get('/v1/site/settings/i18n-detection')).body.data.cookieName).toBe('lang');
  });

  it('holds every limit at its boundary: cookieName 1-50, cookieMaxAge 1-3650, detectionOrder 0-3 of cookie, browser, geo', async () => {
    const { api } = await newSite();
    const base = { detectionEnabled: true, detectionOrder: [], cookieName: 'c', cookieMaxAge: 1 };
    expect((await api.put('/v1/site/settings/i18n-detection', base)).status).toBe(200);
    expect(
      (await api.put('/v1/site/settings/i18n-detection', { ...base, cookieName: 'c'.repeat(50), detectionOrder: ['cookie', 'browser', 'geo'] })).status,
    ).toBe(200);
    for (const [patch, field] of [
      [{ cookieName: '' }, 'cookieName'],
      [{ cookieName: 'c'.repeat(51) }, 'cookieName'],
      [{ cookieMaxAge: 0 }, 'cookieMaxAge'],
      [{ cookieMaxAge: 3651 }, 'cookieMaxAge'],
      [{ detectionOrder: ['cookie', 'browser', 'geo', 'cookie'] }, 'detectionOrder'],
      [{ detectionOrder: ['ip'] }, 'detectionOrder[0]'],
      [{ detectionEnabled: undefined }, 'detectionEnabled'],
    ] as const) {
      const res = await api.put('/v1/site/settings/i18n-detection', { ...base, ...patch });
      expect(res.status, JSON.stringify(patch)).toBe(422);
      expect(Object.keys(res.body.errors), JSON.stringify(patch)).toContain(field);
    }
  });
});
