import { Readable } from 'node:stream';
import type { TSchema } from 'typebox';
import { AppError } from '../../shared/errors.js';
import type { AppModule } from '../types.js';
import { type AnalyticsQuery, type AnalyticsQueryString, parseAnalyticsQuery, rejectUnknownParameters } from './analytics.query.js';
import * as reports from './analytics.reports.js';
import {
  CampaignsResponse,
  ChartResponse,
  CitiesResponse,
  CountriesResponse,
  DevicesResponse,
  FilterValuesResponse,
  OverviewResponse,
  PagesResponse,
  QUERIES,
  ReferrersResponse,
  ScreensResponse,
} from './analytics.reports.schemas.js';
import * as repo from './analytics.repository.js';

const tags = ['Analytics'];
const QUERY_HELP =
  'Period: `period` (7d, 30d, 90d, 3m, 6m, 12m; default 30d) or `startDate` and `endDate` (at most 3,660 days), in the site timezone. Filters: the 13 names (browser, os, device, country, city, referrer, traffic_source, language, entry_page, utm_source, utm_medium, utm_campaign, path), repeated for OR, names AND; `!x` is not, `~x` contains. An unknown parameter is a 422 naming it.';

/** Reports of web analytics, part 2 (decisions A7-A9; design 5): overview, chart, breakdowns, filter values, export. */
export const analyticsReportsModule: AppModule = {
  name: 'analytics-reports',
  routes(app, { db, config }) {
    const ctx: reports.ReportContext = { db, sampleThreshold: config.analyticsSampleThreshold };
    const queryOf = async (siteId: string, query: AnalyticsQueryString): Promise<AnalyticsQuery> => {
      const site = await repo.findSite(db, siteId);
      if (!site) throw new AppError('NOT_FOUND');
      return parseAnalyticsQuery({ id: site.id, timezone: site.timezone }, query);
    };

    const report = <Q extends TSchema & { properties: object }>(
      url: string,
      querystring: Q,
      response: TSchema,
      doc: { operationId: string; summary: string; description?: string },
      answer: (q: AnalyticsQuery, raw: Record<string, unknown>) => Promise<unknown>,
    ) =>
      app.get(
        url,
        {
          config: { scope: 'analytics.view' },
          preValidation: rejectUnknownParameters(querystring),
          schema: { tags, ...doc, description: `${doc.description ?? ''} ${QUERY_HELP}`.trim(), querystring, response: { 200: response } },
        },
        async (req) => {
          const raw = req.query as Record<string, unknown>;
          return answer(await queryOf(req.auth.siteId, raw as AnalyticsQueryString), raw);
        },
      );

    report(
      '/analytics/overview',
      QUERIES.overview,
      OverviewResponse,
      {
        operationId: 'getAnalyticsOverview',
        summary: 'Visitors, visits, pageviews, bounce rate, visit duration and pages per visit, with a comparison',
        description: '`compare=previous|yoy` adds `comparison` and `change` (percent; bounce rate in points; null when the earlier value is 0).',
      },
      (q) => reports.overview(ctx, q),
    );
    report(
      '/analytics/chart',
      QUERIES.chart,
      ChartResponse,
      {
        operationId: 'getAnalyticsChart',
        summary: 'Visitors, visits, pageviews, bounce rate and visit duration per hour, day or month, zero-filled',
        description: 'Granularity from the span unless `granularity` is given; `compare` adds a comparison series aligned by index.',
      },
      (q) => reports.chart(ctx, q),
    );
    report(
      '/analytics/pages',
      QUERIES.pages,
      PagesResponse,
      { operationId: 'listAnalyticsPages', summary: 'Pages by visitors: pageviews, visits, time on page, bounce rate and entries' },
      (q) => reports.pages(ctx, q),
    );
    report(
      '/analytics/referrers',
      QUERIES.referrers,
      ReferrersResponse,
      { operationId: 'listAnalyticsReferrers', summary: 'Referrers by visitors, with the four sources (direct, search, social, other)' },
      (q) => reports.referrers(ctx, q),
    );
    report('/analytics/countries', QUERIES.countries, CountriesResponse, { operationId: 'listAnalyticsCountries', summary: 'Countries by visitors' }, (q) =>
      reports.countries(ctx, q),
    );
    report(
      '/analytics/cities',
      QUERIES.cities,
      CitiesResponse,
      { operationId: 'listAnalyticsCities', summary: 'Cities (with their country) by visitors' },
      (q) => reports.cities(ctx, q),
    );
    report('/analytics/devices/screens', QUERIES.screens, ScreensResponse, { operationId: 'listAnalyticsScreens', summary: 'Screen sizes by visitors' }, (q) =>
      reports.screens(ctx, q),
    );
    report(
      '/analytics/devices',
      QUERIES.devices,
      DevicesResponse,
      { operationId: 'getAnalyticsDevices', summary: 'The top device types, browsers and operating systems by visitors (each `limit`)' },
      (q) => reports.devices(ctx, q),
    );
    report(
      '/analytics/campaigns',
      QUERIES.campaigns,
      CampaignsResponse,
      {
        operationId: 'listAnalyticsCampaigns',
        summary: 'Visits and conversions by UTM values (`groupBy`)',
        description: 'A conversion is a visit with a form submission or a goal.',
      },
      (q, raw) => reports.campaigns(ctx, q, raw.groupBy as reports.UtmKey[]),
    );
    report(
      '/analytics/filter-values',
      QUERIES.filterValues,
      FilterValuesResponse,
      { operationId: 'getAnalyticsFilterValues', summary: "The period's top values of each filter name by visitors (or of `dimension`), narrowed by `search`" },
      (q, raw) => reports.filterValues(ctx, q, raw.dimension as reports.FilterName | undefined, raw.search as string | undefined),
    );

    app.get(
      '/analytics/export',
      {
        config: { scope: 'analytics.export' },
        preValidation: rejectUnknownParameters(QUERIES.export),
        schema: {
          tags,
          operationId: 'exportAnalytics',
          summary: 'Raw events or sessions as CSV (streamed)',
          description: `RFC 4180 CSV, UTF-8, cells a spreadsheet would run as a formula prefixed with \`'\`; at most ${reports.MAX_EXPORT_ROWS.toLocaleString('en')} rows; raw data covers at most rawRetentionDays. ${QUERY_HELP}`,
          querystring: QUERIES.export,
          response: { 200: { description: 'text/csv', type: 'string' } },
        },
      },
      async (req, reply) => {
        const q = await queryOf(req.auth.siteId, req.query as AnalyticsQueryString);
        const type = (req.query as { type: 'events' | 'sessions' }).type;
        reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="analytics-${type}-${q.from}-${q.to}.csv"`);
        return reply.send(Readable.from(reports.exportCsv(db, q, type)) as never);
      },
    );
  },
};
