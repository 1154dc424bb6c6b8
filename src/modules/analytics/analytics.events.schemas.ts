import { Type } from 'typebox';
import { named, Nullable, PageMeta, ref, Timestamp } from '../../shared/schemas.js';

/** Response bodies of the event reports (design analytics.md 5). */
const Text = Nullable(Type.String());
const Percent = (description: string) => Type.Number({ description: `${description}, percent with one decimal` });

const RawMeta = Type.Object({
  rawDataFrom: Type.String({
    format: 'date',
    description: 'The first local date whose raw events are kept (rawRetentionDays): the report covers no earlier day',
  }),
});
const RawMetaRef = ref(named('AnalyticsRawMeta', RawMeta));
const RawPageMeta = Type.Object({ ...PageMeta.properties, ...RawMeta.properties });

export const RealtimeBody = Type.Object({
  data: ref(
    named(
      'AnalyticsRealtime',
      Type.Object({
        visitors: Type.Integer({ description: 'Distinct visitors with an event in the last 5 minutes' }),
        pages: Type.Array(Type.Object({ path: Text, visitors: Type.Integer() }), {
          description: 'Each visitor on the path of their latest pageview; by visitors desc, at most 100',
        }),
      }),
    ),
  ),
  meta: RawMetaRef,
});

export const RealtimePageviewsBody = Type.Object({
  data: Type.Array(Type.Object({ minute: Timestamp, pageviews: Type.Integer() }), { description: 'The last 30 minutes, oldest first, zero-filled' }),
  meta: RawMetaRef,
});

const ElementRow = Type.Object({ path: Text, selector: Text, clicks: Type.Integer(), sessions: Type.Integer() });
const LinkRow = Type.Object({ url: Text, clicks: Type.Integer(), visitors: Type.Integer() });
export const EngagementBody = Type.Object({
  data: ref(
    named(
      'AnalyticsEngagement',
      Type.Object({
        rageClicks: Type.Integer(),
        deadClicks: Type.Integer(),
        outboundClicks: Type.Integer(),
        fileDownloads: Type.Integer(),
        rageElements: Type.Array(ElementRow),
        deadElements: Type.Array(ElementRow),
        outboundLinks: Type.Array(LinkRow),
        downloads: Type.Array(LinkRow),
      }),
    ),
  ),
});

export const FormStatsRow = named(
  'AnalyticsFormStats',
  Type.Object({
    form: Text,
    formId: Nullable(Type.Integer({ description: 'The Cairn form whose slug is the tracked form key, else null' })),
    name: Text,
    starts: Type.Integer({ description: 'Sessions that started the form (a submission implies a start)' }),
    submissions: Type.Integer({ description: 'Sessions that submitted it' }),
    abandonmentRate: Percent('(starts − submissions) ÷ starts'),
    avgCompletionSeconds: Nullable(Type.Integer({ description: 'First submit − first start of a session, averaged; null when none completed' })),
  }),
);
export const FormsBody = Type.Object({ data: Type.Array(ref(FormStatsRow)), meta: ref(named('PageMeta', PageMeta)) });

export const VitalRow = named(
  'AnalyticsVital',
  Type.Object({
    metric: Type.Union([Type.Literal('LCP'), Type.Literal('INP'), Type.Literal('CLS'), Type.Literal('FCP'), Type.Literal('TTFB'), Type.Literal('FID')]),
    unit: Type.Union([Type.Literal('ms'), Type.Literal('score')]),
    p75: Nullable(Type.Number({ description: 'Nearest-rank 75th percentile (10 ms grid, CLS 0.001); null without samples' })),
    rating: Type.Union([Type.Literal('good'), Type.Literal('needs-improvement'), Type.Literal('poor'), Type.Null()]),
    samples: Type.Integer(),
    good: Percent('Share of samples ≤ the good threshold'),
    needsImprovement: Percent('Share of samples between the thresholds'),
    poor: Percent('Share of samples > the poor threshold'),
  }),
);
export const VitalsBody = Type.Object({ data: Type.Array(ref(VitalRow)) });

export const SessionRow = named(
  'AnalyticsSession',
  Type.Object({
    id: Type.Integer(),
    startedAt: Timestamp,
    endedAt: Timestamp,
    duration: Type.Integer({ description: 'Seconds from the first to the last event' }),
    pageviews: Type.Integer(),
    events: Type.Integer(),
    entryPage: Text,
    exitPage: Text,
    bounced: Type.Boolean(),
    source: Type.String(),
    referrer: Text,
    country: Text,
    city: Text,
    device: Text,
    browser: Text,
    os: Text,
    screen: Text,
    language: Text,
    utmSource: Text,
    utmMedium: Text,
    utmCampaign: Text,
    conversions: Type.Integer(),
  }),
);
export const SessionsBody = Type.Object({ data: Type.Array(ref(SessionRow)), meta: RawPageMeta });

const TimelineEvent = named(
  'AnalyticsTimelineEvent',
  Type.Object({
    type: Type.String(),
    timestamp: Timestamp,
    path: Text,
    engagedSeconds: Type.Optional(Type.Integer()),
    scrollDepth: Type.Optional(Nullable(Type.Integer())),
    selector: Type.Optional(Text),
    x: Type.Optional(Nullable(Type.Number())),
    y: Type.Optional(Nullable(Type.Number())),
    rage: Type.Optional(Type.Boolean()),
    dead: Type.Optional(Type.Boolean()),
    url: Type.Optional(Text),
    form: Type.Optional(Text),
    goal: Type.Optional(Text),
    metric: Type.Optional(Text),
    value: Type.Optional(Nullable(Type.Number())),
  }),
);
export const TimelineBody = Type.Object({
  data: Type.Object({ session: ref(SessionRow), events: Type.Array(ref(TimelineEvent), { description: 'In time order, with the fields of their type' }) }),
  meta: RawMetaRef,
});

export const WeekdayHoursBody = Type.Object({
  data: Type.Array(
    Type.Object({
      weekday: Type.Integer({ minimum: 1, maximum: 7, description: '1 = Monday' }),
      hour: Type.Integer({ minimum: 0, maximum: 23 }),
      sessions: Type.Integer(),
    }),
    { description: "168 cells in the site's time zone, zero-filled" },
  ),
});

export const HeatmapBody = Type.Object({
  data: ref(
    named(
      'AnalyticsClickHeatmap',
      Type.Object({
        path: Type.String(),
        clicks: Type.Integer(),
        points: Type.Array(
          Type.Object({
            x: Type.Number({ description: 'Share of page width, 0.01 grid' }),
            y: Type.Integer({ description: 'CSS px, 10 px grid' }),
            count: Type.Integer(),
          }),
          { description: 'At most 5,000, densest first' },
        ),
        elements: Type.Array(Type.Object({ selector: Text, clicks: Type.Integer(), rageClicks: Type.Integer(), deadClicks: Type.Integer() }), {
          description: 'At most 100, most clicked first',
        }),
      }),
    ),
  ),
  meta: RawMetaRef,
});

export const ScrollBody = Type.Object({
  data: ref(
    named(
      'AnalyticsScrollDepth',
      Type.Object({
        path: Type.String(),
        pageviews: Type.Integer(),
        averageDepth: Type.Number({ description: "Average of the pageviews' max scroll depth, percent with one decimal" }),
        depths: Type.Array(Type.Object({ depth: Type.Integer(), percentage: Percent("Share of the page's pageviews that reached this depth") }), {
          description: 'Depths 10, 20, ..., 100',
        }),
      }),
    ),
  ),
  meta: RawMetaRef,
});
