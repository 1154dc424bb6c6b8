import { type TProperties, Type } from 'typebox';
import { AppError, invalid } from '../../shared/errors.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../shared/pagination.js';
import { type Period, PeriodQueryProperties, resolvePeriod } from '../../shared/periods.js';
import { zoneOffset } from './analytics.time.js';

/**
 * The one query model of every analytics report (decisions A8; design analytics.md 4, after
 * Plausible's `stats/query.ex`): the querystring is validated by the route's schema (built by
 * `analyticsQuerySchema`), then `parseAnalyticsQuery` turns it into one `AnalyticsQuery` in the
 * site's time zone. Reports and the SQL layer read only this object.
 */

/** The 13 filter names of the spec, as query parameters. */
export const FILTER_DIMS = [
  'browser',
  'os',
  'device',
  'country',
  'city',
  'referrer',
  'traffic_source',
  'language',
  'entry_page',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'path',
] as const;
export type FilterDim = (typeof FILTER_DIMS)[number];
export type FilterOp = 'is' | 'is_not' | 'contains';

/** Values a filter `is` (or `is_not`) may take where the set is closed. */
export const FILTER_VALUE_SETS: Partial<Record<FilterDim, readonly string[]>> = {
  traffic_source: ['direct', 'search', 'social', 'other'],
  device: ['desktop', 'mobile', 'tablet'],
};

export interface AnalyticsFilter {
  dim: FilterDim;
  op: FilterOp;
  values: string[];
}

export type LocalDate = string;
export type Granularity = 'hour' | 'day' | 'month';

export interface DateSpan {
  from: LocalDate;
  to: LocalDate;
  /** Local days since 1970-01-01 (the stored `day` of sessions and rollups), inclusive. */
  fromDay: number;
  toDay: number;
  /** Epoch ms of the local midnight starting `from` and of the one after `to` (half-open). */
  utcFrom: number;
  utcTo: number;
}

export interface AnalyticsQuery extends DateSpan {
  siteId: string;
  /** The site's IANA zone. */
  timezone: string;
  period: Period | 'custom';
  granularity: Granularity;
  compare: null | ({ kind: 'previous' | 'yoy' } & DateSpan);
  /**
   * One entry per name and operator. Entries of one name: `is` and `contains` entries OR
   * together, `is_not` entries exclude (not any of); different names AND.
   */
  filters: AnalyticsFilter[];
  page: number;
  limit: number;
  sortBy?: string;
  sortOrder: 'asc' | 'desc';
}

const DAY_MS = 86_400_000;
export const MAX_FILTER_VALUES = 20;
export const MAX_CHART_BUCKETS = 1000;
/** Hour buckets only up to this many days (design 4). */
export const MAX_HOURLY_DAYS = 7;

const FilterParam = (dim: FilterDim) =>
  Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
      maxItems: MAX_FILTER_VALUES,
      description: `Filter on ${dim}: repeat for OR; \`!x\` is not, \`~x\` contains (case-insensitive), \`\\!\` a literal \`!\``,
    }),
  );

/** The parameters every report takes (decisions A8), without the list ones. */
export const AnalyticsQueryProperties = {
  ...PeriodQueryProperties,
  compare: Type.Optional(
    Type.Union([Type.Literal('previous'), Type.Literal('yoy')], {
      description: 'previous: the same number of days just before; yoy: the same dates a year earlier',
    }),
  ),
  ...(Object.fromEntries(FILTER_DIMS.map((d) => [d, FilterParam(d)])) as Record<FilterDim, ReturnType<typeof FilterParam>>),
};

/** The chart's own parameter (design 4): hour only up to 7 days, at most 1,000 buckets. */
export const GranularityParam = Type.Optional(
  Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('month')], {
    description: `Bucket size (default from the span: up to 2 days hour, up to 93 days day, else month); hour up to ${MAX_HOURLY_DAYS} days, at most ${MAX_CHART_BUCKETS} buckets`,
  }),
);

export interface QuerySchemaOptions<S extends string, P extends TProperties> {
  /** `sortBy` values of a list report; none: not a list (no page, limit, sortBy, sortOrder). */
  sortBy?: readonly S[];
  defaultSort?: string;
  defaultLimit?: number;
  /** The report's own parameters (`groupBy`, `granularity`, ...). */
  extra?: P;
}

/**
 * The querystring schema of a report: the common parameters, the list ones when `sortBy` is
 * given, and the report's own. Unknown parameters are a 422 naming them: the shared validator
 * removes what `additionalProperties: false` excludes, so the schema states it (OpenAPI) and
 * `rejectUnknownParameters` (a preValidation hook) enforces it before that removal.
 */
export function analyticsQuerySchema<S extends string = never, P extends TProperties = {}>(options: QuerySchemaOptions<S, P> = {}) {
  const list = options.sortBy
    ? {
        page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1' }),
        limit: Type.Integer({
          minimum: 1,
          maximum: MAX_PAGE_SIZE,
          default: options.defaultLimit ?? DEFAULT_PAGE_SIZE,
          description: `Page size, 1-${MAX_PAGE_SIZE}`,
        }),
        sortBy: Type.Optional(
          Type.Unsafe<S>({ type: 'string', enum: [...options.sortBy], description: `Sort field (default ${options.defaultSort ?? 'visitors desc'})` }),
        ),
        sortOrder: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'Sort order (default desc)' })),
      }
    : {};
  return Type.Object({ ...AnalyticsQueryProperties, ...list, ...(options.extra ?? ({} as P)) }, { additionalProperties: false });
}

/** The querystring of a report as its schema validated it (a report's own parameters aside). */
export interface AnalyticsQueryString extends Partial<Record<FilterDim, string[]>> {
  period?: Period;
  startDate?: string;
  endDate?: string;
  compare?: 'previous' | 'yoy';
  granularity?: Granularity;
  page?: number;
  limit?: number;
  sortBy?: string;
  sortOrder?: 'asc' | 'desc';
}

/** A preValidation hook for a report route: a parameter its schema does not name is a 422 naming it. */
export function rejectUnknownParameters(schema: { properties: object }) {
  const known = new Set(Object.keys(schema.properties));
  return async (req: { query: unknown }) => {
    const unknown = Object.keys((req.query ?? {}) as object).filter((k) => !known.has(k.replace(/\[\]$/, '')));
    if (!unknown.length) return;
    const errors = Object.fromEntries(unknown.map((k) => [k, ['is not a parameter of this report']]));
    throw new AppError('VALIDATION_FAILED', { message: `${unknown[0]} is not a parameter of this report`, errors });
  };
}

const dayOf = (date: LocalDate) => Math.round(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
export const dateOf = (day: number): LocalDate => new Date(day * DAY_MS).toISOString().slice(0, 10);

/**
 * The instant a local day starts in a zone. Twice through the offset: the offset at the UTC
 * guess may differ from the one at the local midnight when a DST change falls in between.
 * A midnight skipped by a DST change starts the day at the first instant after it.
 */
export function localMidnight(day: number, timezone: string): number {
  const wall = day * DAY_MS;
  let t = wall - zoneOffset(wall, timezone);
  t = wall - zoneOffset(t, timezone);
  return t;
}

export function spanOf(fromDay: number, toDay: number, timezone: string): DateSpan {
  return {
    from: dateOf(fromDay),
    to: dateOf(toDay),
    fromDay,
    toDay,
    utcFrom: localMidnight(fromDay, timezone),
    utcTo: localMidnight(toDay + 1, timezone),
  };
}

/** A date moved by whole months, its day kept or clamped to the month's end (29 Feb → 28 Feb). */
function shiftMonths(date: LocalDate, months: number): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const first = Date.UTC(y, m - 1 + months, 1);
  const last = new Date(Date.UTC(y, m + months, 0)).getUTCDate();
  return Math.round(first / DAY_MS) + Math.min(d, last) - 1;
}

/** Granularity from the number of days (design 4): ≤ 2 hour, ≤ 93 day, else month. */
export function granularityOf(days: number): Granularity {
  return days <= 2 ? 'hour' : days <= 93 ? 'day' : 'month';
}

/** The number of chart buckets of a span at a granularity. */
export function bucketCount(span: Pick<DateSpan, 'fromDay' | 'toDay' | 'from' | 'to'>, granularity: Granularity): number {
  const days = span.toDay - span.fromDay + 1;
  if (granularity === 'hour') return days * 24;
  if (granularity === 'day') return days;
  const [fy, fm] = span.from.split('-').map(Number) as [number, number];
  const [ty, tm] = span.to.split('-').map(Number) as [number, number];
  return (ty - fy) * 12 + (tm - fm) + 1;
}

/** `!x` is not, `~x` contains; `\!x` and `\~x` are the literal values `!x` and `~x`. */
function parseFilterValue(raw: string): { op: FilterOp; value: string } {
  if (raw.startsWith('\\!') || raw.startsWith('\\~')) return { op: 'is', value: raw.slice(1) };
  if (raw.startsWith('!')) return { op: 'is_not', value: raw.slice(1) };
  if (raw.startsWith('~')) return { op: 'contains', value: raw.slice(1) };
  return { op: 'is', value: raw };
}

function checkFilterValue(dim: FilterDim, op: FilterOp, value: string): string {
  const fail = (message: string) => invalid('VALIDATION_FAILED', dim, message);
  if (value === '') throw fail('a filter value must not be empty');
  if (op === 'contains') return value;
  const set = FILTER_VALUE_SETS[dim];
  if (set && !set.includes(value)) throw fail(`must be one of: ${set.join(', ')} (with ! for is-not, ~ for contains)`);
  if (dim === 'country') {
    if (!/^[A-Za-z]{2}$/.test(value)) throw fail('must be a two-letter country code (ISO 3166-1 alpha-2)');
    return value.toUpperCase();
  }
  if ((dim === 'path' || dim === 'entry_page') && !value.startsWith('/')) throw fail('must start with /');
  return value;
}

export function parseFilters(query: Partial<Record<FilterDim, string[] | string>>): AnalyticsFilter[] {
  const filters: AnalyticsFilter[] = [];
  for (const dim of FILTER_DIMS) {
    const raw = query[dim];
    if (raw === undefined) continue;
    const byOp = new Map<FilterOp, string[]>();
    for (const r of Array.isArray(raw) ? raw : [raw]) {
      const { op, value } = parseFilterValue(r);
      const checked = checkFilterValue(dim, op, value);
      const list = byOp.get(op) ?? byOp.set(op, []).get(op)!;
      if (!list.includes(checked)) list.push(checked);
    }
    for (const op of ['is', 'contains', 'is_not'] as const) {
      const values = byOp.get(op);
      if (values) filters.push({ dim, op, values });
    }
  }
  return filters;
}

/**
 * The query of a report: period or dates in the site's zone (decisions A8; `shared/periods.ts`
 * resolves them and raises `DATE_RANGE_INVALID` / `DATE_RANGE_TOO_LONG`), the comparison span,
 * the filters, the granularity (a chart's `granularity` checked against its span) and the list
 * parameters. The querystring was validated by `analyticsQuerySchema` before.
 */
export function parseAnalyticsQuery(site: { id: string; timezone: string }, query: AnalyticsQueryString, now: number = Date.now()): AnalyticsQuery {
  const range = resolvePeriod(query, site.timezone, new Date(now));
  const fromDay = dayOf(range.startDate);
  const toDay = dayOf(range.endDate);
  const span = spanOf(fromDay, toDay, site.timezone);
  const days = toDay - fromDay + 1;
  const period: AnalyticsQuery['period'] = query.startDate !== undefined ? 'custom' : (query.period ?? '30d');

  let compare: AnalyticsQuery['compare'] = null;
  if (query.compare === 'yoy') {
    compare = { kind: 'yoy', ...spanOf(shiftMonths(span.from, -12), shiftMonths(span.to, -12), site.timezone) };
  } else if (query.compare === 'previous') {
    const months = period.endsWith('m') ? Number(period.slice(0, -1)) : 0;
    compare = months
      ? { kind: 'previous', ...spanOf(shiftMonths(span.from, -months), shiftMonths(span.to, -months), site.timezone) }
      : { kind: 'previous', ...spanOf(fromDay - days, fromDay - 1, site.timezone) };
  }

  let granularity = granularityOf(days);
  if (query.granularity !== undefined) {
    granularity = query.granularity;
    if (granularity === 'hour' && days > MAX_HOURLY_DAYS)
      throw invalid('VALIDATION_FAILED', 'granularity', `hour granularity covers at most ${MAX_HOURLY_DAYS} days`);
    if (bucketCount(span, granularity) > MAX_CHART_BUCKETS)
      throw invalid('VALIDATION_FAILED', 'granularity', `a chart has at most ${MAX_CHART_BUCKETS} buckets: choose a coarser granularity`);
  }

  return {
    siteId: site.id,
    timezone: site.timezone,
    ...span,
    period,
    granularity,
    compare,
    filters: parseFilters(query),
    page: query.page ?? 1,
    limit: query.limit ?? DEFAULT_PAGE_SIZE,
    ...(query.sortBy !== undefined ? { sortBy: query.sortBy } : {}),
    sortOrder: query.sortOrder ?? 'desc',
  };
}
