import { Type } from 'typebox';
import type { AppModule } from '../types.js';
import { Data, ref } from '../../shared/schemas.js';
import { type LocaleInfo, localeCatalog, timezones } from '../../shared/locales.js';
import * as S from './sites.schemas.js';
import * as service from './sites.service.js';

const tags = ['Site settings'];

export const sitesModule: AppModule = {
  name: 'sites',
  routes(app, { db }) {
    app.get(
      '/sites',
      {
        config: { scope: 'sites.view' },
        schema: {
          tags,
          operationId: 'listSites',
          summary: 'The site of this token (at most one)',
          response: { 200: Data(Type.Array(ref(S.SiteListItemRef))) },
        },
      },
      async (req) => ({ data: [service.toSiteListItem(await service.getSite(db, req.auth.siteId))] }),
    );

    app.get(
      '/site/info',
      {
        config: { scope: 'sites.view' },
        schema: { tags, operationId: 'getSiteInfo', summary: 'Basic site information', response: { 200: Data(ref(S.SiteInfoRef)) } },
      },
      async (req) => ({ data: service.toSiteInfo(await service.getSite(db, req.auth.siteId)) }),
    );

    app.get(
      '/site/settings',
      {
        config: { scope: 'sites.view' },
        schema: { tags, operationId: 'getSiteSettings', summary: 'Site settings', response: { 200: ref(S.SiteSettingsRef) } },
      },
      async (req) => service.toSiteSettings(await service.getSite(db, req.auth.siteId)),
    );

    app.put(
      '/site/settings',
      {
        config: { scope: 'sites.update' },
        schema: {
          tags,
          operationId: 'updateSiteSettings',
          summary: 'Update site settings (partial)',
          body: S.SiteSettingsUpdate,
          response: { 200: ref(S.SiteSettingsRef) },
        },
      },
      async (req) => service.updateSettings(db, req.auth.siteId, req.body),
    );

    app.get(
      '/site/settings/timezones',
      {
        config: { scope: 'sites.view' },
        schema: { tags, operationId: 'listTimezones', summary: 'IANA timezone identifiers', response: { 200: Data(Type.Array(Type.String())) } },
      },
      async () => ({ data: timezones() as string[] }),
    );

    app.get(
      '/site/settings/locales',
      {
        config: { scope: 'sites.view' },
        schema: { tags, operationId: 'listLocales', summary: 'Locales a site can enable', response: { 200: Data(Type.Array(S.LocaleSchema)) } },
      },
      async () => ({ data: localeCatalog() as LocaleInfo[] }),
    );

    app.get(
      '/site/settings/language',
      {
        config: { scope: 'sites.view' },
        schema: { tags, operationId: 'getLanguageSettings', summary: 'Language settings', response: { 200: ref(S.LanguageSettingsRef) } },
      },
      async (req) => service.toLanguageSettings(await service.getSite(db, req.auth.siteId)),
    );

    app.put(
      '/site/settings/language',
      {
        config: { scope: 'sites.update' },
        schema: {
          tags,
          operationId: 'updateLanguageSettings',
          summary: 'Update language settings',
          description:
            'All three fields are required. The default locale must be enabled; with multiLanguageEnabled false only the default locale may be enabled.',
          body: S.LanguageUpdate,
          response: { 200: ref(S.LanguageUpdateResultRef) },
        },
      },
      async (req) => service.updateLanguage(db, req.auth.siteId, req.body),
    );

    app.get(
      '/site/settings/i18n-detection',
      {
        config: { scope: 'sites.view' },
        schema: { tags, operationId: 'getLocaleDetection', summary: 'Locale detection settings', response: { 200: Data(ref(S.DetectionRef)) } },
      },
      async (req) => ({ data: service.toDetection(await service.getSite(db, req.auth.siteId)) }),
    );

    app.put(
      '/site/settings/i18n-detection',
      {
        config: { scope: 'sites.update' },
        schema: {
          tags,
          operationId: 'updateLocaleDetection',
          summary: 'Update locale detection settings',
          body: S.DetectionUpdate,
          response: { 200: Data(ref(S.DetectionRef)) },
        },
      },
      async (req) => ({ data: await service.updateDetection(db, req.auth.siteId, req.body) }),
    );
  },
};
