import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import type { CreateAppOptions } from '../../src/app.js';
import { buildTestApp, createSiteWithToken, type TestApp, type TestContext, type TestStorage } from './app.js';
import { type Client, client, expectErrorShape } from './http.js';

/** A client bound to a new site's all-scopes token, with the site's ids. */
export type SiteClient = Client & { siteId: string; userId: string; token: string };

/** A new site (with `locales` enabled, the first the default) and a client for its token. */
export async function site(app: TestApp, locales: string[] = ['en']): Promise<SiteClient> {
  const s = await createSiteWithToken(app);
  const api = client(app, s.token);
  if (locales.length > 1) {
    const res = await api.put('/v1/site/settings/language', { defaultLocale: locales[0], multiLanguageEnabled: true, enabledLocales: locales });
    expect(res.status).toBe(200);
  }
  return Object.assign(api, { siteId: s.siteId, userId: s.userId, token: s.token });
}

/**
 * One app on a fresh database for the test file (built before its tests, closed after), and
 * `site()` bound to it: `const ctx = useTestApp(); ... const api = await ctx.site(['en', 'de']);`.
 */
export function useTestApp(overrides: Partial<Config> = {}, options: CreateAppOptions = {}, storage: TestStorage = 'local') {
  let built: TestContext | undefined;
  beforeAll(async () => {
    built = await buildTestApp(overrides, options, storage);
  });
  afterAll(() => built?.close());
  const current = () => {
    if (!built) throw new Error('useTestApp: the app is built in beforeAll; use it inside tests');
    return built;
  };
  return {
    get app(): TestApp {
      return current().app;
    },
    get config(): Config {
      return current().config;
    },
    close: () => current().close(),
    site: (locales?: string[]) => site(current().app, locales),
  };
}

export interface TranslatableUnderTest {
  /** The collection path: `/v1/tags`. */
  path: string;
  /** A valid create body; `n` makes it unique within a site (names, keys, slugs). */
  body(n: number): Record<string, unknown>;
  /** A translated field, filled in `body`, that can be emptied by an update (null or ''). */
  translated: { field: string; empty: unknown };
}

/**
 * The translation rules every translatable group shares (decisions G9, G10), generated per
 * resource: status per enabled locale, copy-to-locale (with `locale` as a synonym, 409 when the
 * group has the locale, 422 for a locale not enabled or missing), joining a group.
 */
export function describeTranslations(ctx: { site(locales?: string[]): Promise<SiteClient> }, r: TranslatableUnderTest): void {
  describe(`translations of ${r.path} (shared rules)`, () => {
    it('reports missing, partial and complete per enabled locale', async () => {
      const api = await ctx.site(['en', 'de', 'fr']);
      const en = (await api.post(r.path, r.body(1))).body.data;
      const status0 = await api.get(`${r.path}/${en.id}/translations`);
      expect(status0.status).toBe(200);
      expect(status0.body).toEqual({ data: { en: { status: 'complete' }, de: { status: 'missing' }, fr: { status: 'missing' } } });
      const de = await api.post(r.path, { ...r.body(2), locale: 'de', translationGroup: en.translationGroup });
      expect(de.status, JSON.stringify(de.body)).toBe(201);
      const fr = await api.post(r.path, { ...r.body(3), locale: 'fr', translationGroup: en.translationGroup, [r.translated.field]: r.translated.empty });
      expect(fr.status, JSON.stringify(fr.body)).toBe(201);
      expect((await api.get(`${r.path}/${en.id}/translations`)).body.data).toEqual({
        en: { status: 'complete' },
        de: { status: 'complete' },
        fr: { status: 'partial' },
      });
      await api.put(`${r.path}/${de.body.data.id}`, { [r.translated.field]: r.translated.empty });
      expect((await api.get(`${r.path}/${en.id}/translations`)).body.data.de).toEqual({ status: 'partial' });
    });

    it('copies to a locale (200) in the same group, accepts locale as a synonym, and answers 409 when taken', async () => {
      const api = await ctx.site(['en', 'de', 'fr']);
      const en = (await api.post(r.path, r.body(1))).body.data;
      const copy = await api.post(`${r.path}/${en.id}/copy-to-locale`, { targetLocale: 'de' });
      expect(copy.status).toBe(200);
      expect(copy.body.data).toMatchObject({ locale: 'de', translationGroup: en.translationGroup, [r.translated.field]: en[r.translated.field] });
      expect(copy.body.data.id).not.toBe(en.id);
      expect((await api.post(`${r.path}/${en.id}/copy-to-locale`, { locale: 'fr' })).status).toBe(200);
      const again = await api.post(`${r.path}/${en.id}/copy-to-locale`, { targetLocale: 'de' });
      expect(again.status).toBe(409);
      expectErrorShape(again.body, 409, 'TRANSLATION_EXISTS');
      expect((await api.post(`${r.path}/${copy.body.data.id}/copy-to-locale`, { targetLocale: 'en' })).status).toBe(409);
      expect((await api.post(`${r.path}/${en.id}/copy-to-locale`, { targetLocale: 'en' })).status).toBe(409);
      expect((await api.get(`${r.path}?translationGroup=${en.translationGroup}`)).body.meta.total).toBe(3);
    });

    it('refuses a target locale that is not enabled (422 on that field) or missing (422 on targetLocale), storing nothing', async () => {
      const api = await ctx.site(['en', 'de']);
      const en = (await api.post(r.path, r.body(1))).body.data;
      for (const [body, field, code] of [
        [{ targetLocale: 'it' }, 'targetLocale', 'LOCALE_NOT_ENABLED'],
        [{ locale: 'it' }, 'locale', 'LOCALE_NOT_ENABLED'],
        [{}, 'targetLocale', 'VALIDATION_FAILED'],
      ] as const) {
        const res = await api.post(`${r.path}/${en.id}/copy-to-locale`, body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expectErrorShape(res.body, 422, code);
        expect(Object.keys(res.body.errors)).toEqual([field]);
      }
      expect((await api.get(r.path)).body.meta.total).toBe(1);
    });

    it('refuses to join a translation group in a locale it already has (409), and a group of another site is a new group of its own', async () => {
      const api = await ctx.site(['en', 'de']);
      const en = (await api.post(r.path, r.body(1))).body.data;
      const dup = await api.post(r.path, { ...r.body(2), translationGroup: en.translationGroup });
      expect(dup.status).toBe(409);
      expectErrorShape(dup.body, 409, 'TRANSLATION_EXISTS');
      const other = await ctx.site(['en', 'de']);
      const joined = await other.post(r.path, { ...r.body(2), locale: 'de', translationGroup: en.translationGroup });
      expect(joined.status).toBe(201);
      expect((await api.get(`${r.path}/${en.id}/translations`)).body.data.de).toEqual({ status: 'missing' });
      expect((await other.get(`${r.path}/${en.id}/translations`)).status).toBe(404);
    });
  });
}
