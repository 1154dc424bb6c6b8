import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { retentionTask } from '../../jobs/retention.js';
import { jsonTextParser } from '../../plugins/json-body.js';
import { etagOf, notModified, sendCacheable } from '../../shared/http-cache.js';
import { Data, named, Paginated, ref, SiteKeyParam } from '../../shared/schemas.js';
import type { Db } from '../../db/types.js';
import type { App, AppModule } from '../types.js';
import { bannerAssets, type Asset } from './cookie-consent.banner.js';
import * as records from './cookie-consent.records.js';
import * as settings from './cookie-consent.settings.js';

const tags = ['Cookie consent'];
const SettingsRef = ref(named('CookieConsentSettings', settings.Settings));
const RecordRef = ref(named('CookieConsentRecord', records.ConsentRecord));
const PublicRecordRef = ref(named('CookieConsentReceipt', records.PublicRecord));
const StatsRef = ref(named('CookieConsentStats', records.Stats));
const PublicConfigRef = ref(
  named(
    'CookieConsentPublicConfig',
    Type.Object({
      ...Type.Omit(settings.Settings, ['translations', 'logRetentionDays', 'updatedAt']).properties,
      locale: Type.String({ description: 'The locale of the texts: the asked one, else its language, else the site default' }),
    }),
  ),
);
const PublicQuery = Type.Object({ siteKey: SiteKeyParam });
const RECORD_BODY_LIMIT = 16 * 1024;

/** The public side (decisions CC3, G14, G19): config, records (JSON or beacon text), the banner. */
function publicRoutes(app: App, db: Db) {
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: RECORD_BODY_LIMIT }, jsonTextParser(app));

  app.get(
    '/public/cookie-consent/config',
    {
      config: { scope: 'public', siteKey: true, deliveryCache: true },
      schema: {
        tags,
        operationId: 'getPublicCookieConsentConfig',
        summary: 'What the banner needs, with the site key (ETag, 304)',
        description: 'Texts, categories and services in `locale` (the exact tag, else its language, else the site default). 404 while the banner is disabled.',
        querystring: Type.Object({ locale: Type.Optional(Type.String({ maxLength: 35 })), siteKey: SiteKeyParam }),
        response: {
          200: Data(PublicConfigRef),
          304: { description: 'Not modified', type: 'null' },
          404: { $ref: 'Error#', description: 'The banner is disabled' },
        },
      },
    },
    async (req, reply) => {
      const body = { data: await records.publicConfig(db, req.publicSite.siteId, req.query.locale) };
      const etag = etagOf(JSON.stringify(body));
      if (notModified(req, reply, etag, 'public, max-age=300')) return reply.send(null);
      return body;
    },
  );

  app.post(
    '/public/cookie-consent/consents',
    {
      config: { scope: 'public', siteKey: true, keepsDeliveryCache: true },
      bodyLimit: RECORD_BODY_LIMIT,
      schema: {
        tags,
        operationId: 'recordCookieConsent',
        summary: "Record a visitor's choice, with the site key (JSON, or JSON as text/plain for beacons)",
        description:
          'The server derives `action` (`accept_all`: every category; `reject_all`: only required ones; `custom`), drops unknown categories and services and adds required categories. Stored append-only with the address truncated; 409 `COOKIE_CONSENT_DISABLED` while disabled. Rate-limited per address.',
        querystring: PublicQuery,
        body: records.RecordInput,
        response: {
          201: Data(PublicRecordRef),
          409: { $ref: 'Error#', description: '`COOKIE_CONSENT_DISABLED`: the banner is disabled' },
          413: { $ref: 'Error#', description: 'The body is over 16 KiB' },
        },
      },
    },
    async (req, reply) => {
      const visitor = { ip: req.ip ?? null, userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null };
      return reply.code(201).send({ data: await records.record(db, req.publicSite.siteId, req.body, visitor) });
    },
  );

  const asset = (file: string, operationId: string, contentType: string, pick: () => Asset) =>
    app.get(
      `/public/cookie-consent/${file}`,
      {
        config: { scope: 'public', siteKey: true },
        schema: {
          tags,
          operationId,
          summary: `The banner's ${file} (vanilla-cookieconsent 3, MIT${file.endsWith('.js') ? ", with Cairn's loader" : ''})`,
          description:
            'Embed it with a `script` element, `src=".../v1/public/cookie-consent/banner.js?siteKey=pk_..."` and `defer`; gate tags with `type="text/plain" data-category="<key>"`. Strong ETag, cached for an hour.',
          querystring: PublicQuery,
          response: { 200: { description: contentType, type: 'string' }, 304: { description: 'Not modified', type: 'null' } },
        },
      },
      async (req, reply) => sendCacheable(req, reply.header('x-content-type-options', 'nosniff'), pick(), contentType, 3600),
    );
  asset('banner.js', 'getCookieConsentBannerScript', 'text/javascript; charset=utf-8', () => bannerAssets().js);
  asset('banner.css', 'getCookieConsentBannerStyles', 'text/css; charset=utf-8', () => bannerAssets().css);
}

/** Cookie consent (decisions CC1-CC4): settings, stats, logs and export; the public side. */
export const cookieConsentModule: AppModule = {
  name: 'cookie-consent',
  jobs(worker) {
    // Each site's own retention (logRetentionDays, read by pruneRecords: the task's `days` only
    // switches it on), hourly once caught up; the daily counts stay.
    worker.task('cookie_consent.retention', retentionTask(1, records.pruneRecords));
  },
  async routes(app, { db }) {
    app.get(
      '/cookie-consent/settings',
      {
        config: { scope: 'cookie_consent.view' },
        schema: {
          tags,
          operationId: 'getCookieConsentSettings',
          summary: 'Banner settings (defaults before the first PUT)',
          response: { 200: Data(SettingsRef) },
        },
      },
      async (req) => ({ data: await settings.getSettings(db, req.auth.siteId) }),
    );

    app.put(
      '/cookie-consent/settings',
      {
        config: { scope: 'cookie_consent.update' },
        schema: {
          tags,
          operationId: 'updateCookieConsentSettings',
          summary: 'Update banner settings (partial)',
          description:
            "Arrays and objects replace what was there; `texts` merge. Services name a configured category (422 `CONSENT_CATEGORY_UNKNOWN`), translations an enabled locale (422 `LOCALE_NOT_ENABLED`). `revision` goes up when category keys, a category's `required` or service keys change.",
          body: settings.SettingsUpdate,
          response: {
            200: Data(SettingsRef),
            422: {
              $ref: 'Error#',
              description: '`VALIDATION_FAILED`, `CONSENT_CATEGORY_UNKNOWN`, `LOCALE_NOT_ENABLED` or `LOCALE_INVALID`, naming each field',
            },
          },
        },
      },
      async (req) => ({ data: await settings.updateSettings(db, req.auth.siteId, req.body) }),
    );

    app.get(
      '/cookie-consent/stats',
      {
        config: { scope: 'cookie_consent.view' },
        schema: {
          tags,
          operationId: 'getCookieConsentStats',
          summary: 'Choices per action and accepted category over a period',
          description:
            '`period` or `startDate` and `endDate` (decisions A8), days of the site timezone. The three actions add up to `totalInteractions`; counts outlive record retention.',
          querystring: records.StatsQuery,
          response: {
            200: StatsRef,
            422: { $ref: 'Error#', description: '`VALIDATION_FAILED`, `DATE_RANGE_INVALID` (both forms, one date, start after end) or `DATE_RANGE_TOO_LONG`' },
          },
        },
      },
      async (req) => records.stats(db, req.auth.siteId, req.query),
    );

    app.get(
      '/cookie-consent/logs',
      {
        config: { scope: 'cookie_consent.logs' },
        schema: {
          tags,
          operationId: 'listCookieConsentLogs',
          summary: 'Consent records (proof of each choice), newest first',
          description: 'Filters `action`, `category` (records that accepted it), `consentId`, `revision`, `dateFrom`/`dateTo`.',
          querystring: records.LogQuery,
          response: { 200: Paginated(RecordRef) },
        },
      },
      async (req) => records.listLogs(db, req.auth.siteId, req.query),
    );

    app.get(
      '/cookie-consent/export',
      {
        config: { scope: 'cookie_consent.export' },
        schema: {
          tags,
          operationId: 'exportCookieConsentLogs',
          summary: 'Consent records as CSV (streamed), oldest first',
          description: `Columns: ${records.CSV_COLUMNS.join(', ')}; the log's filters; RFC 4180, UTF-8 with a BOM, formula cells neutralised (decisions F2).`,
          querystring: records.ExportQuery,
          response: { 200: { description: 'text/csv', type: 'string' } },
        },
      },
      async (req, reply) => {
        const { fileName, csv } = await records.exportLogs(db, req.auth.siteId, req.query);
        reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${fileName}"`);
        return reply.send(Readable.from(csv) as never);
      },
    );

    await app.register(async (scope) => publicRoutes(scope as App, db));
  },
};
