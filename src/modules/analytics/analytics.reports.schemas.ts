import { type TProperties, type TSchema, Type } from 'typebox';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../shared/pagination.js';
import { named, Nullable, PageMeta, ref } from '../../shared/schemas.js';
import { analyticsQuerySchema, FILTER_DIMS, GranularityParam } from './analytics.query.js';
import { UTM_KEYS } from './analytics.reports.js';

/** Response and query schemas of the reports of design 5 (decisions A9). */
const Count = Type.Integer({ minimum: 0 });
const Percent = (description: string) => Type.Number({ description: `${description}: a percent, one decimal` });
const Seconds = (description: string) => Type.Integer({ description: `${description}, whole seconds` });

const Sampling = {
  sampled: Type.Boolean({ description: 'Whether the answer was computed from a sample (decisions A7)' }),
  sampleRate: Type.Optional(Type.Number({ description: 'The share of sessions read when sampled (1/k)' })),
};

const ListMeta = ref(named('AnalyticsListMeta', Type.Object({ ...PageMeta.properties, ...Sampling })));
const List = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array((item as { $id?: string }).$id ? ref(item) : item), meta: ListMeta });

const SummaryProperties = {
  visitors: Count,
  visits: Count,
  pageviews: Count,
  bounceRate: Percent('Bounces ÷ visits'),
  avgVisitDuration: Seconds('Average visit duration'),
  pagesPerSession: Type.Number({ description: 'Pageviews ÷ visits, two decimals' }),
};
const Summary = ref(named('AnalyticsSummary', Type.Object(SummaryProperties)));
const Change = ref(
  named(
    'AnalyticsChange',
    Type.Object(Object.fromEntries(Object.keys(SummaryProperties).map((k) => [k, Nullable(Type.Number())])), {
      description: 'Percent change against the comparison (bounceRate: the difference in points); null when the earlier value is 0',
    }),
  ),
);

export const OverviewResponse = Type.Object({
  data: ref(named('AnalyticsOverview', Type.Object({ ...SummaryProperties, comparison: Nullable(Summary), change: Nullable(Change) }))),
  meta: ref(
    named(
      'AnalyticsOverviewMeta',
      Type.Object({
        startDate: Type.String({ format: 'date' }),
        endDate: Type.String({ format: 'date' }),
        compareStartDate: Type.Optional(Type.String({ format: 'date' })),
        compareEndDate: Type.Optional(Type.String({ format: 'date' })),
        ...Sampling,
      }),
    ),
  ),
});

const ChartPoint = ref(
  named(
    'AnalyticsChartPoint',
    Type.Object({
      date: Type.String({ description: 'YYYY-MM-DD, YYYY-MM-DDTHH:00 (local) or YYYY-MM' }),
      visitors: Count,
      visits: Count,
      pageviews: Count,
      bounceRate: Percent('Bounces ÷ visits'),
      avgVisitDuration: Seconds('Average visit duration'),
    }),
  ),
);
export const ChartResponse = Type.Object({
  data: Type.Array(ChartPoint),
  comparison: Nullable(Type.Array(ChartPoint)),
  meta: Type.Object({
    granularity: Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('month')]),
    startDate: Type.String({ format: 'date' }),
    endDate: Type.String({ format: 'date' }),
    ...Sampling,
  }),
});

const Share = { visitors: Count, visits: Count, percentage: Percent("Share of the period's visitors") };

export const PagesResponse = List(
  named(
    'AnalyticsPage',
    Type.Object({
      path: Nullable(Type.String()),
      pageviews: Count,
      visitors: Count,
      visits: Count,
      avgTimeOnPage: Seconds('Engaged time ÷ pageviews'),
      bounceRate: Nullable(Percent('Bounces of the visits entering on the page ÷ those visits (null when none)')),
      entries: Count,
    }),
  ),
);
const Source = Type.Union([Type.Literal('direct'), Type.Literal('search'), Type.Literal('social'), Type.Literal('other')]);
export const ReferrersResponse = Type.Object({
  data: Type.Array(
    ref(
      named(
        'AnalyticsReferrer',
        Type.Object({
          referrer: Nullable(Type.String({ description: 'Referring host; null for direct' })),
          source: Source,
          ...Share,
          bounceRate: Percent('Bounces ÷ visits'),
        }),
      ),
    ),
  ),
  meta: ListMeta,
  sources: Type.Array(Type.Object({ source: Source, visitors: Count, visits: Count, percentage: Percent("Share of the period's visitors") }), {
    description: 'Always the four sources, in the order direct, search, social, other',
  }),
});
export const CountriesResponse = List(Type.Object({ country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2; null unknown' })), ...Share }));
export const CitiesResponse = List(Type.Object({ city: Nullable(Type.String()), country: Nullable(Type.String()), ...Share }));
export const ScreensResponse = List(Type.Object({ screen: Nullable(Type.String({ description: 'WIDTHxHEIGHT' })), ...Share }));
const Top = (key: string) =>
  Type.Array(Type.Object({ [key]: Nullable(Type.String()), visitors: Count, percentage: Percent("Share of the period's visitors") }));
export const DevicesResponse = Type.Object({
  data: Type.Object({ devices: Top('device'), browsers: Top('browser'), operatingSystems: Top('os') }),
  meta: Type.Object(Sampling),
});
export const CampaignsResponse = List(
  named(
    'AnalyticsCampaign',
    Type.Object({
      utmSource: Type.Optional(Nullable(Type.String())),
      utmMedium: Type.Optional(Nullable(Type.String())),
      utmCampaign: Type.Optional(Nullable(Type.String())),
      utmTerm: Type.Optional(Nullable(Type.String())),
      utmContent: Type.Optional(Nullable(Type.String())),
      visitors: Count,
      visits: Count,
      conversions: Type.Integer({ minimum: 0, description: 'Visits with a form submission or a goal' }),
      conversionRate: Percent('Conversions ÷ visits'),
    }),
  ),
);
export const FilterValuesResponse = Type.Object({
  data: ref(
    named(
      'AnalyticsFilterValues',
      Type.Object(
        Object.fromEntries(FILTER_DIMS.map((d) => [d, Type.Optional(Type.Array(Type.Object({ value: Type.String(), visitors: Count })))])) as Record<
          string,
          TSchema
        >,
      ),
    ),
  ),
  meta: Type.Object(Sampling),
});

const Limit = (defaultLimit: number) =>
  Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: defaultLimit, description: `How many values, 1-${MAX_PAGE_SIZE}` });

const SHARE_SORT = ['visitors', 'visits', 'percentage'] as const;
export const QUERIES = {
  overview: analyticsQuerySchema(),
  chart: analyticsQuerySchema({ extra: { granularity: GranularityParam } }),
  pages: analyticsQuerySchema({ sortBy: ['visitors', 'pageviews', 'visits', 'avgTimeOnPage', 'bounceRate', 'entries', 'path'] }),
  referrers: analyticsQuerySchema({ sortBy: [...SHARE_SORT, 'bounceRate', 'referrer'] }),
  countries: analyticsQuerySchema({ sortBy: [...SHARE_SORT, 'country'] }),
  cities: analyticsQuerySchema({ sortBy: [...SHARE_SORT, 'city'] }),
  screens: analyticsQuerySchema({ sortBy: [...SHARE_SORT, 'screen'] }),
  devices: analyticsQuerySchema({ extra: { limit: Limit(DEFAULT_PAGE_SIZE) } }),
  campaigns: analyticsQuerySchema({
    sortBy: ['visitors', 'visits', 'conversions', 'conversionRate'],
    extra: {
      groupBy: Type.Array(Type.Unsafe<(typeof UTM_KEYS)[number]>({ type: 'string', enum: [...UTM_KEYS] }), {
        minItems: 1,
        maxItems: 5,
        default: ['utm_campaign'],
        description: 'The UTM keys grouped by, 1-5 (default utm_campaign); visits without all of them are left out',
      }),
    },
  }),
  filterValues: analyticsQuerySchema({
    extra: {
      dimension: Type.Optional(Type.Unsafe<(typeof FILTER_DIMS)[number]>({ type: 'string', enum: [...FILTER_DIMS], description: 'Only this filter name' })),
      search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only values containing this (case-insensitive)' })),
      limit: Limit(DEFAULT_PAGE_SIZE),
    },
  }),
  export: analyticsQuerySchema({
    extra: {
      type: Type.Union([Type.Literal('events'), Type.Literal('sessions')], { default: 'events', description: 'Rows: events (default) or sessions' }),
    } satisfies TProperties,
  }),
};
