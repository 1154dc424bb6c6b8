import { Type } from 'typebox';
import { Data, Message, Nullable, named, Paginated, ref } from '../../shared/schemas.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../shared/pagination.js';
import type { AppModule } from '../types.js';
import * as connection from './search-console.connection.js';
import * as indexing from './search-console.indexing.js';
import * as reports from './search-console.reports.js';
import { scheduleTask, syncHandler } from './search-console.sync.js';

const tags = ['Search console'];
const scope = 'analytics.gsc';
const errors = { 409: { $ref: 'Error#' }, 424: { $ref: 'Error#' }, 422: { $ref: 'Error#' } } as const;

const Connection = named(
  'SearchConnection',
  Type.Object({
    connected: Type.Boolean(),
    propertyUrl: Nullable(Type.String()),
    authType: Nullable(Type.String({ description: '`service_account` or `refresh_token`' })),
    clientEmail: Nullable(Type.String({ description: "The service account's e-mail; the credentials themselves are never answered" })),
    status: Nullable(Type.String({ description: '`syncing`, `ok` or `error` (Google refused the credentials: connect again)' })),
    lastError: Nullable(Type.String()),
    connectedAt: Nullable(Type.String({ format: 'date-time' })),
    lastSyncAt: Nullable(Type.String({ format: 'date-time' })),
    dataFrom: Nullable(Type.String({ format: 'date' })),
    dataThrough: Nullable(Type.String({ format: 'date', description: 'The last complete (final) Pacific-time day stored' })),
  }),
);
const ConnectionBody = Type.Object({
  propertyUrl: Type.String({
    maxLength: 2048,
    pattern: '^(sc-domain:[A-Za-z0-9.-]+|https?://[^\\s]+/)$',
    description: '`sc-domain:example.com` or a URL-prefix property ending in `/`',
  }),
  credentials: Type.Object(
    { type: Type.String({ description: '`service_account` (the downloaded key JSON) or `refresh_token` ({ clientId, clientSecret, refreshToken })' }) },
    { additionalProperties: true, description: "Write-only, stored encrypted. A key file's `token_uri` is ignored." },
  ),
});

const Metrics = {
  clicks: Type.Integer(),
  impressions: Type.Integer(),
  ctr: Type.Number({ description: 'clicks / impressions, 4 decimals; 0 without impressions' }),
  position: Nullable(Type.Number({ description: 'Mean position weighted by impressions, 2 decimals; null without impressions' })),
};
const Day = Nullable(Type.String({ format: 'date' }));
const Overview = named(
  'SearchOverview',
  Type.Object({
    ...Metrics,
    comparison: Type.Object({ ...Metrics, startDate: Day, endDate: Day }, { description: 'The same number of days just before' }),
    startDate: Day,
    endDate: Day,
    dataThrough: Day,
  }),
);
const Change = {
  clicksChange: Type.Integer({ description: 'Current clicks - previous clicks' }),
  clicksChangePercent: Nullable(Type.Number({ description: 'One decimal; null when the previous clicks were 0; -100 for a key with no clicks now' })),
};
const QueryChange = named('SearchQueryChange', Type.Object({ query: Type.String(), ...Metrics, ...Change }));
const PageChange = named('SearchPageChange', Type.Object({ page: Type.String(), ...Metrics, ...Change }));
const LinkCount = Type.Object({ targetUrl: Type.String(), count: Type.Integer({ description: 'Distinct published contents and page blocks linking to it' }) });
const Links = named('SearchLinks', Type.Object({ externalLinks: Type.Array(LinkCount), internalLinks: Type.Array(LinkCount) }));
const PeriodQuery = {
  period: Type.Optional(
    Type.Union(
      reports.PERIODS.map((p) => Type.Literal(p)),
      { description: 'Ends at the last synced day (dataThrough); default 28d' },
    ),
  ),
  startDate: Type.Optional(Type.String({ format: 'date', description: 'With endDate, in place of period (Pacific days, within the last 16 months)' })),
  endDate: Type.Optional(Type.String({ format: 'date' })),
};
const ReportQuery = Type.Object(PeriodQuery);
const ChangeQuery = Type.Object({
  ...PeriodQuery,
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE }),
  minImpressions: Type.Integer({ minimum: 0, default: 0, description: 'Keys with fewer impressions in both periods are left out' }),
});
const STATES =
  'Reads only the rows the sync stored. 409 `integration_not_connected` before a connection; 424 `integration_failed` when Google refused the connection and nothing is synced; zeros and `dataThrough: null` while the first sync runs.';

const CHANGE_LISTS = [
  [
    '/integrations/search/growing-queries',
    'searchGrowingQueries',
    'query',
    'up',
    QueryChange,
    'Queries whose clicks grew, by change desc, then clicks desc, then query',
  ],
  ['/integrations/search/lost-queries', 'searchLostQueries', 'query', 'down', QueryChange, 'Queries whose clicks fell, by change asc, then query'],
  ['/integrations/search/growing-pages', 'searchGrowingPages', 'page', 'up', PageChange, 'Pages whose clicks grew, by change desc, then clicks desc, then URL'],
  ['/integrations/search/declining-pages', 'searchDecliningPages', 'page', 'down', PageChange, 'Pages whose clicks fell, by change asc, then URL'],
] as const;

/** Search-console connection, sync and reports (decisions A2, SC1-SC6; design consent-search-users.md section 2). */
export const searchConsoleModule: AppModule = {
  name: 'search-console',
  jobs(worker, { db, secrets, config }) {
    worker.handle(connection.SYNC_JOB, syncHandler({ db, secrets, config: config.searchConsole }));
    worker.task('search_console.schedule', scheduleTask());
    worker.task(
      'search_console.indexing',
      indexing.indexingTask({ secrets, config: config.searchConsole, intervalMs: config.searchConsole.indexingIntervalMs }),
    );
  },
  routes(app, { db, secrets, config }) {
    const google = config.searchConsole;
    app.get(
      '/integrations/search/connection',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'getSearchConnection',
          summary: "The site's search-console connection (never its credentials)",
          response: { 200: Data(ref(Connection)) },
        },
      },
      async (req) => ({ data: await connection.getConnection(db, req.auth.siteId) }),
    );
    app.put(
      '/integrations/search/connection',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'connectSearchConsole',
          summary: 'Connect a search-console property',
          description:
            "The credentials get an access token and the property's permission from Google first: 422 `SEARCH_CONSOLE_AUTH_FAILED` when the token endpoint refuses them, 422 `SEARCH_CONSOLE_PROPERTY_DENIED` for no or unverified access, 424 `integration_failed` when Google cannot be reached; nothing is stored then. Then they are stored encrypted and the sync (16 months back, newest first) is queued.",
          body: ConnectionBody,
          response: { 200: Data(ref(Connection)), ...errors },
        },
      },
      async (req) => ({ data: await connection.connect({ db, secrets, google }, req.auth.siteId, req.body) }),
    );
    app.delete(
      '/integrations/search/connection',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'disconnectSearchConsole',
          summary: 'Disconnect: the credentials and every synced row are deleted',
          response: { 200: Message, 409: { $ref: 'Error#' } },
        },
      },
      async (req) => connection.disconnect(db, req.auth.siteId),
    );
    app.post(
      '/integrations/search/sync',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'syncSearchConsole',
          summary: 'Queue a sync now (a sync already queued or running is joined)',
          description: '409 before a connection; 424 `integration_failed` when Google refused the stored credentials (connect again).',
          response: { 202: Data(Type.Object({ queued: Type.Boolean() })), 409: { $ref: 'Error#' }, 424: { $ref: 'Error#' } },
        },
      },
      async (req, reply) => reply.code(202).send(await connection.requestSync(db, req.auth.siteId)),
    );
    app.get(
      '/integrations/search/stats',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'searchOverview',
          summary: 'Clicks, impressions, CTR and position of the period, with the period before',
          description: `Totals come from the date totals, anonymised queries included. ${STATES}`,
          querystring: ReportQuery,
          response: { 200: Data(ref(Overview)), ...errors },
        },
      },
      async (req) => reports.overview(db, req.auth.siteId, req.query),
    );
    for (const [path, operationId, kind, direction, item, summary] of CHANGE_LISTS) {
      app.get(
        path,
        {
          config: { scope },
          schema: { tags, operationId, summary, description: STATES, querystring: ChangeQuery, response: { 200: Paginated(ref(item)), ...errors } },
        },
        async (req) => reports.changes(db, req.auth.siteId, kind, direction, req.query),
      );
    }
    app.get(
      '/integrations/search/links',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'searchLinks',
          summary: "Links in the site's own published contents and page blocks, top 100 each",
          description: `Google's API has no links data: these are counted from the site's own published contents and page blocks. \`internalLinks\` point at the site's domain (or a path), \`externalLinks\` elsewhere (outbound links, not backlinks); each count is the number of distinct linking records. \`period\` is validated but does not filter: links are current state. ${STATES}`,
          querystring: ReportQuery,
          response: { 200: Data(ref(Links)), ...errors },
        },
      },
      async (req) => reports.links(db, req.auth.siteId, req.query),
    );
  },
};
