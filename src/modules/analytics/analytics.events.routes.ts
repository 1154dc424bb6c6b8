import { type TProperties, Type } from 'typebox';
import type { Executor } from '../../db/types.js';
import { invalid } from '../../shared/errors.js';
import { MAX_PAGE_SIZE } from '../../shared/pagination.js';
import { forms } from '../forms/forms.resource.js';
import type { App, ModuleDeps } from '../types.js';
import * as reports from './analytics.events.reports.js';
import * as schemas from './analytics.events.schemas.js';
import type { DimRange } from './analytics.events.sql.js';
import { SESSION_SORT } from './analytics.events.sql.js';
import { type AnalyticsQuery, type AnalyticsQueryString, analyticsQuerySchema, parseAnalyticsQuery, rejectUnknownParameters } from './analytics.query.js';
import * as repo from './analytics.repository.js';
import { narrowedRead } from './analytics.sql.js';
import { DEFAULTS } from './analytics.settings.js';
import type { Collector } from './analytics.collector.js';
import { localTime } from './analytics.time.js';

/**
 * The event reports under /v1/analytics (design 5; scope analytics.view): realtime, engagement,
 * forms analytics, Core Web Vitals, sessions and timelines, the weekday-hour heatmap, click
 * heatmaps and scroll depth. Raw-data reports (R) cover at most rawRetentionDays and say from
 * which date in `meta.rawDataFrom`; they flush the collector's queue first (R6).
 */
const tags = ['Analytics'];
const config = { scope: 'analytics.view' } as const;
const MAX_SESSION_ID = Number.MAX_SAFE_INTEGER;

/** A report's querystring schema with its preValidation hook (unknown parameters are a 422 naming them). */
function querySchema<S extends string = never, P extends TProperties = {}>(options: Parameters<typeof analyticsQuerySchema<S, P>>[0] = {}) {
  const querystring = analyticsQuerySchema<S, P>(options);
  return { querystring, preValidation: rejectUnknownParameters(querystring) };
}

/** The page of the heatmap routes: the `path` parameter, required, one page. */
const PagePath = {
  path: Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
    minItems: 1,
    maxItems: 1,
    description: 'The page (required, one path starting with /)',
  }),
};

interface Context {
  query: AnalyticsQuery;
  /** The first local day whose raw rows retention keeps. */
  rawFromDay: number;
}

async function contextOf(db: Executor, siteId: string, query: AnalyticsQueryString, now: number): Promise<Context> {
  const [site, settings] = await Promise.all([repo.findSite(db, siteId), repo.findSettings(db, siteId)]);
  const timezone = site!.timezone;
  const raw = settings?.raw_retention_days ?? DEFAULTS.rawRetentionDays;
  return { query: parseAnalyticsQuery({ id: siteId, timezone }, query, now), rawFromDay: localTime(now, timezone).day - raw };
}

/** The days and filters a report reads; raw reports start no earlier than raw retention. */
function rangeOf(db: Executor, ctx: Context, opts: { raw?: boolean; pathOn: 'event' | 'session'; withoutPath?: boolean }): DimRange {
  const { query } = ctx;
  const filters = opts.withoutPath ? query.filters.filter((f) => f.dim !== 'path') : query.filters;
  return {
    siteId: query.siteId,
    fromDay: opts.raw ? Math.max(query.fromDay, ctx.rawFromDay) : query.fromDay,
    toDay: query.toDay,
    ...(filters.length ? { ...narrowedRead(db, query.siteId, filters, opts.pathOn === 'event'), filters } : {}),
  };
}

/** The one page of the heatmap routes (the schema requires one `path` value; `!` and `~` name no single page). */
function pageOf(query: AnalyticsQuery): string {
  const f = query.filters.find((x) => x.dim === 'path');
  if (f?.op !== 'is' || f.values.length !== 1) throw invalid('VALIDATION_FAILED', 'path', 'must be one page path starting with /');
  return f.values[0]!;
}

export function eventReportRoutes(app: App, { db }: ModuleDeps, collector: () => Collector | undefined) {
  const flush = async () => collector()?.flush();
  const realtimeQuery = Type.Object({}, { additionalProperties: false });
  const realtimeReports = [
    {
      url: '/analytics/realtime',
      operationId: 'getAnalyticsRealtime',
      summary: 'Visitors of the last 5 minutes and the pages they are on',
      description:
        'Distinct visitors with an event in the last 5 minutes, each counted on the path of their latest pageview (pages by visitors desc, at most 100). Raw data.',
      body: schemas.RealtimeBody,
      report: reports.realtime,
    },
    {
      url: '/analytics/realtime/pageviews',
      operationId: 'getAnalyticsRealtimePageviews',
      summary: 'Pageviews per minute of the last 30 minutes',
      description: '30 entries, oldest first, the current minute last, zero-filled. Raw data.',
      body: schemas.RealtimePageviewsBody,
      report: reports.realtimePageviews,
    },
  ] as const;
  for (const r of realtimeReports) {
    app.get(
      r.url,
      {
        config,
        preValidation: rejectUnknownParameters(realtimeQuery),
        schema: { tags, operationId: r.operationId, summary: r.summary, description: r.description, querystring: realtimeQuery, response: { 200: r.body } },
      },
      async (req) => {
        await flush();
        const now = Date.now();
        const ctx = await contextOf(db, req.auth.siteId, {}, now);
        return { data: await r.report(db, req.auth.siteId, now), meta: { rawDataFrom: reports.rawDataFrom(ctx.rawFromDay) } } as never;
      },
    );
  }

  const engagementQuery = querySchema({
    extra: { limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 10, description: 'Rows of each list (1-100)' }) },
  });
  app.get(
    '/analytics/engagement',
    {
      config,
      preValidation: engagementQuery.preValidation,
      schema: {
        tags,
        operationId: 'getAnalyticsEngagement',
        summary: 'Rage and dead clicks, outbound links and downloads',
        description: 'Totals of the period and the top `limit` (default 10) elements and links. `path` filters the page the clicks happened on.',
        querystring: engagementQuery.querystring,
        response: { 200: schemas.EngagementBody },
      },
    },
    async (req) => {
      const ctx = await contextOf(db, req.auth.siteId, req.query as AnalyticsQueryString, Date.now());
      return { data: await reports.engagement(db, rangeOf(db, ctx, { pathOn: 'event' }), ctx.query.limit) };
    },
  );

  const formsQuery = querySchema({ sortBy: reports.FORM_SORT, defaultSort: 'starts desc' });
  app.get(
    '/analytics/forms-analytics',
    {
      config,
      preValidation: formsQuery.preValidation,
      schema: {
        tags,
        operationId: 'getAnalyticsForms',
        summary: 'Form starts, submissions, abandonment and completion time',
        description:
          "One row per tracked form key, joined to the site's Cairn form of that slug (`formId`, `name`; else null). Starts and submissions count once per session and form; a submission without a start counts as a start. Abandonment = (starts − submissions) ÷ starts; completion = first submit − first start of the session.",
        querystring: formsQuery.querystring,
        response: { 200: schemas.FormsBody },
      },
    },
    async (req) => {
      const ctx = await contextOf(db, req.auth.siteId, req.query as AnalyticsQueryString, Date.now());
      const { query } = ctx;
      return reports.formsAnalytics(
        db,
        rangeOf(db, ctx, { pathOn: 'event' }),
        { page: query.page, limit: query.limit, sortBy: query.sortBy as reports.FormSort | undefined, sortOrder: query.sortOrder },
        (slugs) => formsBySlugOf(req.auth.siteId, slugs),
      );
    },
  );
  const formsBySlugOf = async (siteId: string, slugs: string[]) => {
    const found = new Map<string, { id: number; name: string }>();
    // The oldest form of a slug wins when several locales share it.
    for (let i = 0; i < slugs.length; i += MAX_PAGE_SIZE) {
      const page = await forms.service.list(db, siteId, {
        page: 1,
        limit: MAX_PAGE_SIZE,
        slugs: slugs.slice(i, i + MAX_PAGE_SIZE),
        sortBy: 'created_at',
        sortOrder: 'asc',
      });
      for (const f of page.data as Array<{ id: number; slug: string; name: string }>) if (!found.has(f.slug)) found.set(f.slug, { id: f.id, name: f.name });
    }
    return found;
  };

  const cwvQuery = querySchema();
  app.get(
    '/analytics/cwv',
    {
      config,
      preValidation: cwvQuery.preValidation,
      schema: {
        tags,
        operationId: 'getAnalyticsCoreWebVitals',
        summary: 'Core Web Vitals: p75 and the Good / Needs improvement / Poor split',
        description:
          "LCP, INP, CLS, FCP, TTFB, FID in that order. Values are kept on a grid (10 ms; CLS 0.001); p75 is the nearest-rank 75th percentile (null without samples), rated by web-vitals' thresholds (good ≤ the first, poor > the second: LCP 2500/4000, INP 200/500, CLS 0.1/0.25, FCP 1800/3000, TTFB 800/1800, FID 100/300).",
        querystring: cwvQuery.querystring,
        response: { 200: schemas.VitalsBody },
      },
    },
    async (req) => {
      const ctx = await contextOf(db, req.auth.siteId, req.query as AnalyticsQueryString, Date.now());
      return { data: await reports.coreWebVitals(db, rangeOf(db, ctx, { pathOn: 'event' })) };
    },
  );

  const sessionsQuery = querySchema({ sortBy: Object.keys(SESSION_SORT) as Array<keyof typeof SESSION_SORT>, defaultSort: 'startedAt desc' });
  app.get(
    '/analytics/sessions',
    {
      config,
      preValidation: sessionsQuery.preValidation,
      schema: {
        tags,
        operationId: 'listAnalyticsSessions',
        summary: 'Sessions of the period (raw data)',
        description: 'Newest first by default; `path` keeps sessions that viewed the page. Covers at most rawRetentionDays (`meta.rawDataFrom`).',
        querystring: sessionsQuery.querystring,
        response: { 200: schemas.SessionsBody },
      },
    },
    async (req) => {
      await flush();
      const ctx = await contextOf(db, req.auth.siteId, req.query as AnalyticsQueryString, Date.now());
      const { query } = ctx;
      const result = await reports.sessionsList(db, rangeOf(db, ctx, { raw: true, pathOn: 'session' }), {
        page: query.page,
        limit: query.limit,
        sortBy: query.sortBy as keyof typeof SESSION_SORT | undefined,
        sortOrder: query.sortOrder,
      });
      return { data: result.data, meta: { ...result.meta, rawDataFrom: reports.rawDataFrom(ctx.rawFromDay) } };
    },
  );

  const weekdayQuery = querySchema();
  app.get(
    '/analytics/sessions/heatmap',
    {
      config,
      preValidation: weekdayQuery.preValidation,
      schema: {
        tags,
        operationId: 'getAnalyticsWeekdayHours',
        summary: "Sessions by weekday and hour in the site's time zone",
        description: '168 cells (weekday 1 = Monday … 7, hour 0-23), zero-filled; a session counts at the local hour it started.',
        querystring: weekdayQuery.querystring,
        response: { 200: schemas.WeekdayHoursBody },
      },
    },
    async (req) => {
      const ctx = await contextOf(db, req.auth.siteId, req.query as AnalyticsQueryString, Date.now());
      return { data: await reports.weekdayHours(db, rangeOf(db, ctx, { pathOn: 'session' })) };
    },
  );

  const timelineQuery = Type.Object({}, { additionalProperties: false });
  app.get(
    '/analytics/sessions/:sessionId',
    {
      config,
      preValidation: rejectUnknownParameters(timelineQuery),
      schema: {
        tags,
        operationId: 'getAnalyticsSession',
        summary: 'One session and its events in time order (raw data)',
        description: 'A session that is unknown, of another site or past rawRetentionDays is a 404.',
        params: Type.Object({ sessionId: Type.Integer({ minimum: 1, maximum: MAX_SESSION_ID }) }),
        querystring: timelineQuery,
        response: { 200: schemas.TimelineBody },
      },
    },
    async (req) => {
      await flush();
      const ctx = await contextOf(db, req.auth.siteId, {}, Date.now());
      const data = await reports.sessionTimeline(db, req.auth.siteId, req.params.sessionId, ctx.rawFromDay);
      return { data, meta: { rawDataFrom: reports.rawDataFrom(ctx.rawFromDay) } };
    },
  );

  // The two page reports: one `path`, raw days, filters on the page's events.
  const pageReports = [
    {
      url: '/analytics/heatmap',
      operationId: 'getAnalyticsClickHeatmap',
      summary: "A page's clicks: grid points and elements (raw data)",
      description:
        '`path` is required (one page). Points: x on a 0.01 grid of the page width, y on a 10 px grid, at most 5,000, densest first; elements: the 100 most clicked selectors with their rage and dead clicks. The `device` filter separates layouts.',
      body: schemas.HeatmapBody,
      report: reports.clickHeatmap,
    },
    {
      url: '/analytics/heatmap/scroll',
      operationId: 'getAnalyticsScrollDepth',
      summary: "A page's scroll depth by tens of percent (raw data)",
      description:
        "`path` is required (one page). For each depth 10-100, the share of the page's pageviews whose deepest scroll reached it (a pageview without engagement counts as 0); `averageDepth` the average deepest scroll.",
      body: schemas.ScrollBody,
      report: reports.scrollDepth,
    },
  ] as const;
  for (const r of pageReports) {
    const pageQuery = querySchema({ extra: PagePath });
    app.get(
      r.url,
      {
        config,
        preValidation: pageQuery.preValidation,
        schema: {
          tags,
          operationId: r.operationId,
          summary: r.summary,
          description: r.description,
          querystring: pageQuery.querystring,
          response: { 200: r.body },
        },
      },
      async (req) => {
        await flush();
        const ctx = await contextOf(db, req.auth.siteId, req.query as AnalyticsQueryString, Date.now());
        const path = pageOf(ctx.query);
        const data = await r.report(db, rangeOf(db, ctx, { raw: true, pathOn: 'event', withoutPath: true }), path);
        return { data, meta: { rawDataFrom: reports.rawDataFrom(ctx.rawFromDay) } } as never;
      },
    );
  }
}
