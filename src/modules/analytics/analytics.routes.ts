import { setImmediate as nextTurn } from 'node:timers/promises';
import { Type } from 'typebox';
import { unscoped } from '../../db/request-transaction.js';
import { jsonTextParser } from '../../plugins/json-body.js';
import { Data, named, ref } from '../../shared/schemas.js';
import type { App, AppModule, ModuleDeps } from '../types.js';
import { Collector } from './analytics.collector.js';
import { GeoLookup } from './analytics.enrich.js';
import { eventReportRoutes } from './analytics.events.routes.js';
import { importEvents } from './analytics.import.js';
import { AnalyticsSettings, AnalyticsSettingsUpdate, CollectResult, Envelope, ImportBody, ImportResult, MAX_IMPORT_EVENTS } from './analytics.schemas.js';
import * as settings from './analytics.settings.js';
import { type AnalyticsStore, SqlAnalyticsStore } from './analytics.store.js';
import { rebuildTask, retentionTask } from './analytics.tasks.js';
import { trackerRoutes } from './tracker.routes.js';

const tags = ['Analytics'];
const SettingsRef = ref(
  named('AnalyticsSettings', AnalyticsSettings, [
    {
      trackingEnabled: true,
      rawRetentionDays: 90,
      aggregateRetentionDays: 730,
      excludedPaths: ['/admin/**', '/preview/*'],
      excludedIps: ['203.0.113.0/24', '2001:db8::/32'],
      snippet: '<script defer src="https://cms.example.com/v1/public/analytics/script.js" data-site-key="pk_4f9a2c7e1b8d3f60"></script>',
    },
  ]),
);
const COLLECTOR_BODY_LIMIT = 64 * 1024;
/** 10,000 events of a few hundred bytes each (decisions A5: at least 16 MiB). */
const IMPORT_BODY_LIMIT = 16 * 1024 * 1024;

/** One store and one collector per database handle: the routes, the worker tasks and tests share them. */
const instances = new WeakMap<object, { store: AnalyticsStore; collector?: Collector }>();
export function analyticsOf(db: ModuleDeps['db']): { store: AnalyticsStore; collector?: Collector } {
  // The modules' handle is request-scoped (db/request-transaction.ts), the worker's and the tests' is not: one store for both.
  const key = unscoped(db);
  let found = instances.get(key);
  if (!found) {
    found = { store: new SqlAnalyticsStore(key) };
    instances.set(key, found);
  }
  return found;
}

function publicRoutes(app: App, config: ModuleDeps['config'], collector: Collector) {
  // Beacons and keepalive fetches send JSON as text/plain (no CORS preflight).
  app.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: COLLECTOR_BODY_LIMIT }, jsonTextParser(app));
  app.post(
    '/public/analytics/events',
    {
      bodyLimit: COLLECTOR_BODY_LIMIT,
      // A batch changes no answer the delivery cache holds: a site's tracked pageviews must not empty its cache.
      config: { scope: 'public', siteKey: true, keepsDeliveryCache: true, rateLimit: { max: config.analytics.rateLimitMax, timeWindow: 60_000 } },
      schema: {
        tags,
        operationId: 'collectAnalyticsEvents',
        summary: 'Collect a batch of tracker events, with the site key',
        description:
          "The tracker's batch (JSON, or JSON sent as `text/plain` by `sendBeacon`): 1-50 events in at most 64 KiB. A wrong envelope is a 422; a wrong event is dropped and counted. Bots, pages on other hosts than the site's domain (its `www.` twin, the preview URL's host), excluded paths and addresses are dropped; with tracking off everything is. Limits: `ANALYTICS_RATE_LIMIT_MAX` batches a minute per address, `ANALYTICS_SITE_MAX_EVENTS_PER_MIN` events a minute per site (429 with `Retry-After`); a full write queue is a 503 with `Retry-After`. No cookie is read or set, and the address is never stored or logged.",
        querystring: Type.Object({ siteKey: Type.Optional(Type.String()) }),
        body: Envelope,
        response: { 202: CollectResult },
      },
    },
    async (req, reply) => {
      // Beacons yield to the turn's other requests (decisions AN16): a tracker does not wait for its
      // answer, an editor or a page's delivery read does. A flood of batches then costs another
      // site's read the batches handled after it, not also those read from the sockets before it.
      await nextTurn();
      const userAgent = req.headers['user-agent'];
      const result = await collector.collect({ siteId: req.publicSite.siteId, ip: req.ip, userAgent, body: req.body });
      return reply.code(202).send(result);
    },
  );
}

/** Web analytics, part 1 (decisions A1, A3-A6, A10): the collector, import, settings and the storage reports read. */
export const analyticsModule: AppModule = {
  name: 'analytics',
  jobs(worker, { db }) {
    const { store } = analyticsOf(db);
    worker.task('analytics.rebuild', rebuildTask(store));
    worker.task('analytics.retention', retentionTask(db, store));
  },
  async routes(app, deps) {
    const { db, config } = deps;
    const analytics = analyticsOf(db);
    const collector = new Collector(db, analytics.store, new GeoLookup(config.analytics.geoIpDb), config.analytics, () => app.log);
    analytics.collector = collector;
    // preClose: the root's onClose closes the database, and runs before a module's onClose.
    app.addHook('preClose', async () => collector.close());

    app.get(
      '/analytics/settings',
      {
        config: { scope: 'analytics.settings' },
        schema: { tags, operationId: 'getAnalyticsSettings', summary: 'Analytics settings, with the snippet to paste', response: { 200: Data(SettingsRef) } },
      },
      async (req) => ({ data: await settings.getSettings(db, config.publicUrl, req.auth.siteId) }),
    );

    app.put(
      '/analytics/settings',
      {
        config: { scope: 'analytics.settings' },
        schema: {
          tags,
          operationId: 'updateAnalyticsSettings',
          summary: 'Update analytics settings (partial)',
          description:
            '`rawRetentionDays` 7-365 (raw events and sessions), `aggregateRetentionDays` 30-3650 (daily rollups), never below the raw days (422 `RETENTION_INVALID`). `excludedPaths`: at most 100 globs starting with `/` (`*` one segment, `**` anything). `excludedIps`: at most 100 addresses or CIDR ranges, IPv4 or IPv6, stored canonical.',
          body: AnalyticsSettingsUpdate,
          response: { 200: Data(SettingsRef) },
        },
      },
      async (req) => ({ data: await settings.updateSettings(db, config.publicUrl, req.auth.siteId, req.body) }),
    );

    await app.register(async (scope) => {
      scope.addContentTypeParser('application/x-ndjson', { parseAs: 'string', bodyLimit: IMPORT_BODY_LIMIT }, (_req, body, done) => {
        done(null, { events: parseNdjson(body as string) });
      });
      (scope as App).post(
        '/analytics/import',
        {
          bodyLimit: IMPORT_BODY_LIMIT,
          config: { scope: 'analytics.settings' },
          schema: {
            tags,
            operationId: 'importAnalyticsEvents',
            summary: 'Import historical events (JSON or NDJSON)',
            description: `JSON \`{ events: [...] }\` or NDJSON (\`application/x-ndjson\`, one event a line), 1-${MAX_IMPORT_EVENTS.toLocaleString('en')} events. Each: \`timestamp\` (ISO 8601 with offset, not older than aggregateRetentionDays, at most 5 minutes ahead), \`visitorId\` (1-100), optional \`sessionId\` (groups events; else the 30-minute rule), \`id\` (a re-run skips ids already stored), \`type\` (default pageview), \`path\` or \`url\`, \`referrer\`, \`utmSource\`...\`utmContent\`, \`country\`, \`city\`, \`browser\`, \`os\`, \`device\`, \`screen\`, \`language\`, \`pageviewId\`, and the type's fields (\`engagedMs\`, \`scrollDepth\`; \`x\`, \`y\`, \`viewportWidth\`, \`selector\`, \`rage\`, \`dead\`; \`targetUrl\`; \`form\`; \`name\`, \`value\`; \`metric\`, \`value\`). No bot, host, exclusion or geo processing. Wrong events are listed by index (first 1,000) and the rest stored.`,
            body: ImportBody,
            response: { 201: ImportResult },
          },
        },
        async (req, reply) => reply.code(201).send(await importEvents(db, analytics.store, req.auth.siteId, req.body.events)),
      );
    });

    await app.register(async (scope) => publicRoutes(scope as App, config, collector));
    trackerRoutes(app);
    eventReportRoutes(app, deps, () => analytics.collector);
  },
};

/** NDJSON lines as values; a line that is not JSON stays a string, which the import reports by its index. */
function parseNdjson(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        return line;
      }
    });
}
