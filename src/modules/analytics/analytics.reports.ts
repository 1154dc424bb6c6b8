import type { Executor } from '../../db/types.js';
import { csvLine } from '../../shared/csv.js';
import { pageMeta } from '../../shared/pagination.js';
import type { AnalyticsQuery, DateSpan, FilterDim, Granularity } from './analytics.query.js';
import { type Bucket, exportRows, FILTER_COLUMN, readSums, type SumRow, type Sums, valuesOf } from './analytics.sql.js';
import { EVENT_TYPES, FLAG_DEAD, FLAG_RAGE, SESSION_DIMS, type SessionDim } from './analytics.store.js';
import { dateOfDay, monthOf } from './analytics.time.js';

/**
 * The reports of decisions A9 (design 5) from the sums of `analytics.sql.ts`: counts are
 * integers, rates and percentages percents with one decimal (half away from zero), durations
 * whole seconds; every metric is computed here, the same for rollups, live rows and scans.
 */
const SOURCES = ['direct', 'search', 'social', 'other'] as const;
export const UTM_KEYS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'] as const;
export type UtmKey = (typeof UTM_KEYS)[number];

const round = (x: number, places: number) => {
  const f = 10 ** places;
  return (Math.sign(x) * Math.round(Math.abs(x) * f)) / f;
};
const percent = (part: number, whole: number) => (whole > 0 ? round((part / whole) * 100, 1) : 0);
const seconds = (ms: number, count: number) => (count > 0 ? round(ms / count / 1000, 0) : 0);

const EMPTY: Sums = { visitors: 0, visits: 0, pageviews: 0, bounces: 0, duration_ms: 0, engaged_ms: 0, events: 0, conversions: 0 };

export interface ReportContext {
  db: Executor;
  sampleThreshold: number;
}

export interface Summary {
  visitors: number;
  visits: number;
  pageviews: number;
  bounceRate: number;
  avgVisitDuration: number;
  pagesPerSession: number;
}

function summaryOf(s: Sums): Summary {
  return {
    visitors: s.visitors,
    visits: s.visits,
    pageviews: s.pageviews,
    bounceRate: percent(s.bounces, s.visits),
    avgVisitDuration: seconds(s.duration_ms, s.visits),
    pagesPerSession: s.visits > 0 ? round(s.pageviews / s.visits, 2) : 0,
  };
}

/** Percent change (one decimal), bounce rate in points; null when the earlier value is 0 (decisions A9). */
function changeOf(now: Summary, before: Summary): Record<keyof Summary, number | null> {
  const out = {} as Record<keyof Summary, number | null>;
  for (const key of Object.keys(now) as Array<keyof Summary>) {
    if (before[key] === 0) out[key] = null;
    else if (key === 'bounceRate') out[key] = round(now[key] - before[key], 1);
    else out[key] = round(((now[key] - before[key]) / before[key]) * 100, 1);
  }
  return out;
}

interface Sampling {
  sampled: boolean;
  sampleRate?: number;
}
const samplingOf = (...rates: number[]): Sampling => {
  const rate = Math.min(1, ...rates);
  return rate < 1 ? { sampled: true, sampleRate: rate } : { sampled: false };
};

async function sums(ctx: ReportContext, q: AnalyticsQuery, span: DateSpan, group: null | 'page' | readonly SessionDim[], bucket: Bucket, knownOnly = false) {
  return readSums(ctx.db, {
    siteId: q.siteId,
    fromDay: span.fromDay,
    toDay: span.toDay,
    filters: q.filters,
    group,
    bucket,
    knownOnly,
    sampleThreshold: ctx.sampleThreshold,
  });
}

async function totalsOf(ctx: ReportContext, q: AnalyticsQuery, span: DateSpan = q) {
  const read = await sums(ctx, q, span, null, 'none');
  return { totals: read.rows[0] ?? { ...EMPTY }, sampleRate: read.sampleRate };
}

export async function overview(ctx: ReportContext, q: AnalyticsQuery) {
  const now = await totalsOf(ctx, q);
  const before = q.compare ? await totalsOf(ctx, q, q.compare) : null;
  const data = summaryOf(now.totals);
  const comparison = before ? summaryOf(before.totals) : null;
  return {
    data: { ...data, comparison, change: comparison ? changeOf(data, comparison) : null },
    meta: {
      startDate: q.from,
      endDate: q.to,
      ...(q.compare ? { compareStartDate: q.compare.from, compareEndDate: q.compare.to } : {}),
      ...samplingOf(now.sampleRate, before?.sampleRate ?? 1),
    },
  };
}

/** The buckets of a span at a granularity, oldest first: their key (as `readSums` answers) and label. */
function bucketsOf(span: DateSpan, granularity: Granularity): Array<{ key: number; date: string }> {
  const out: Array<{ key: number; date: string }> = [];
  if (granularity === 'month') {
    for (let day = span.fromDay; day <= span.toDay; day = monthOf(day).last + 1) {
      const { month } = monthOf(day);
      out.push({ key: month, date: `${Math.floor(month / 100)}-${String(month % 100).padStart(2, '0')}` });
    }
    return out;
  }
  for (let day = span.fromDay; day <= span.toDay; day++) {
    if (granularity === 'day') out.push({ key: day, date: dateOfDay(day) });
    else for (let h = 0; h < 24; h++) out.push({ key: day * 24 + h, date: `${dateOfDay(day)}T${String(h).padStart(2, '0')}:00` });
  }
  return out;
}

async function series(ctx: ReportContext, q: AnalyticsQuery, span: DateSpan) {
  const read = await sums(ctx, q, span, null, q.granularity);
  const byKey = new Map(read.rows.map((r) => [r.bucket, r]));
  const data = bucketsOf(span, q.granularity).map(({ key, date }) => {
    const s = summaryOf(byKey.get(key) ?? EMPTY);
    return { date, visitors: s.visitors, visits: s.visits, pageviews: s.pageviews, bounceRate: s.bounceRate, avgVisitDuration: s.avgVisitDuration };
  });
  return { data, sampleRate: read.sampleRate };
}

export async function chart(ctx: ReportContext, q: AnalyticsQuery) {
  const now = await series(ctx, q, q);
  const before = q.compare ? await series(ctx, q, q.compare) : null;
  return {
    data: now.data,
    comparison: before?.data ?? null,
    meta: { granularity: q.granularity, startDate: q.from, endDate: q.to, ...samplingOf(now.sampleRate, before?.sampleRate ?? 1) },
  };
}

type Row = Record<string, string | number | null>;

/**
 * One page of a list: sorted by `sortBy` (default visitors) in `sortOrder`, nulls last, ties by
 * the label ascending (design 5).
 */
function pageOf<T extends Row>(rows: T[], q: AnalyticsQuery, label: (row: T) => string, sampling: Sampling, defaultSort = 'visitors') {
  const field = q.sortBy ?? defaultSort;
  const sign = q.sortOrder === 'asc' ? 1 : -1;
  const sorted = [...rows].sort((a, b) => {
    const x = a[field] ?? null;
    const y = b[field] ?? null;
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      if (typeof x === 'string' || typeof y === 'string') return sign * String(x).localeCompare(String(y));
      return sign * (x - y);
    }
    return label(a).localeCompare(label(b));
  });
  const start = (q.page - 1) * q.limit;
  return { data: sorted.slice(start, start + q.limit), meta: { ...pageMeta(rows.length, q.page, q.limit), ...sampling } };
}

/** Rows of one grouped read with their dictionary values, and the period's visitors for percentages. */
async function breakdown(ctx: ReportContext, q: AnalyticsQuery, group: 'page' | readonly SessionDim[], knownOnly = false) {
  const [read, total] = await Promise.all([sums(ctx, q, q, group, 'none', knownOnly), totalsOf(ctx, q)]);
  const values = await valuesOf(
    ctx.db,
    q.siteId,
    read.rows.flatMap((r) => r.keys),
  );
  const name = (id: number | undefined) => (id ? (values.get(id) ?? null) : null);
  return { rows: read.rows, name, visitors: total.totals.visitors, sampling: samplingOf(read.sampleRate, total.sampleRate) };
}

const labelOf = (v: string | number | null | undefined) => (v === null || v === undefined ? '' : String(v));

export async function pages(ctx: ReportContext, q: AnalyticsQuery) {
  const [viewed, entered] = await Promise.all([breakdown(ctx, q, 'page'), breakdown(ctx, q, ['entry_path'])]);
  const entries = new Map(entered.rows.map((r) => [r.keys[0]!, r.visits]));
  const rows = viewed.rows
    .filter((r) => r.pageviews > 0)
    .map((r) => {
      const entryCount = entries.get(r.keys[0]!) ?? 0;
      return {
        path: viewed.name(r.keys[0]),
        pageviews: r.pageviews,
        visitors: r.visitors,
        visits: r.visits,
        avgTimeOnPage: seconds(r.engaged_ms, r.pageviews),
        bounceRate: entryCount > 0 ? percent(r.bounces, entryCount) : null,
        entries: entryCount,
      };
    });
  return pageOf(rows, q, (r) => labelOf(r.path), viewed.sampling);
}

export async function referrers(ctx: ReportContext, q: AnalyticsQuery) {
  const [list, bySource] = await Promise.all([breakdown(ctx, q, ['referrer', 'source']), breakdown(ctx, q, ['source'])]);
  const rows = list.rows.map((r) => ({
    referrer: list.name(r.keys[0]),
    source: list.name(r.keys[1]) ?? 'direct',
    visitors: r.visitors,
    visits: r.visits,
    bounceRate: percent(r.bounces, r.visits),
    percentage: percent(r.visitors, list.visitors),
  }));
  const sourceRows = new Map(bySource.rows.map((r) => [bySource.name(r.keys[0]) ?? 'direct', r]));
  const sources = SOURCES.map((source) => {
    const r = sourceRows.get(source) ?? EMPTY;
    return { source, visitors: r.visitors, visits: r.visits, percentage: percent(r.visitors, bySource.visitors) };
  });
  return { ...pageOf(rows, q, (r) => `${labelOf(r.referrer)}|${r.source}`, list.sampling), sources };
}

/** A list of one session column: `{ [key]: value, visitors, visits, percentage }`. */
async function simpleList(ctx: ReportContext, q: AnalyticsQuery, column: SessionDim, key: string) {
  const b = await breakdown(ctx, q, [column]);
  const rows = b.rows.map((r) => ({ [key]: b.name(r.keys[0]), visitors: r.visitors, visits: r.visits, percentage: percent(r.visitors, b.visitors) }));
  return pageOf(rows, q, (r) => labelOf(r[key]), b.sampling);
}

export const countries = (ctx: ReportContext, q: AnalyticsQuery) => simpleList(ctx, q, 'country', 'country');
export const screens = (ctx: ReportContext, q: AnalyticsQuery) => simpleList(ctx, q, 'screen', 'screen');

export async function cities(ctx: ReportContext, q: AnalyticsQuery) {
  const b = await breakdown(ctx, q, ['city', 'country']);
  const rows = b.rows.map((r) => ({
    city: b.name(r.keys[0]),
    country: b.name(r.keys[1]),
    visitors: r.visitors,
    visits: r.visits,
    percentage: percent(r.visitors, b.visitors),
  }));
  return pageOf(rows, q, (r) => `${labelOf(r.city)}|${labelOf(r.country)}`, b.sampling);
}

export async function devices(ctx: ReportContext, q: AnalyticsQuery) {
  const top = async (column: SessionDim) => {
    const b = await breakdown(ctx, q, [column]);
    const rows = b.rows.map((r) => ({ [column]: b.name(r.keys[0]), visitors: r.visitors, percentage: percent(r.visitors, b.visitors) }));
    return pageOf(rows, { ...q, page: 1, sortBy: 'visitors', sortOrder: 'desc' }, (r) => labelOf(r[column]), b.sampling);
  };
  const [d, b, o] = await Promise.all([top('device'), top('browser'), top('os')]);
  return {
    data: { devices: d.data, browsers: b.data, operatingSystems: o.data },
    meta: samplingOf(d.meta.sampleRate ?? 1, b.meta.sampleRate ?? 1, o.meta.sampleRate ?? 1),
  };
}

const UTM_FIELD: Record<UtmKey, string> = {
  utm_source: 'utmSource',
  utm_medium: 'utmMedium',
  utm_campaign: 'utmCampaign',
  utm_term: 'utmTerm',
  utm_content: 'utmContent',
};

export async function campaigns(ctx: ReportContext, q: AnalyticsQuery, groupBy: readonly UtmKey[]) {
  const keys = [...new Set(groupBy)];
  const b = await breakdown(ctx, q, keys, true);
  const rows = b.rows.map((r) => {
    const row: Row = {};
    keys.forEach((k, i) => {
      row[UTM_FIELD[k]] = b.name(r.keys[i]);
    });
    return { ...row, visitors: r.visitors, visits: r.visits, conversions: r.conversions, conversionRate: percent(r.conversions, r.visits) } as Row;
  });
  return pageOf(rows, q, (r) => keys.map((k) => labelOf(r[UTM_FIELD[k]])).join('|'), b.sampling);
}

/** The period's top values of each filter name (or one), by visitors, narrowed by `search` (contains, case-insensitive). */
export type FilterName = FilterDim;
export async function filterValues(ctx: ReportContext, q: AnalyticsQuery, dimension: FilterDim | undefined, search: string | undefined) {
  const dims = dimension ? [dimension] : (Object.keys(FILTER_COLUMN) as FilterDim[]);
  const needle = search?.toLowerCase();
  const data: Record<string, Array<{ value: string; visitors: number }>> = {};
  let rate = 1;
  for (const dim of dims) {
    const { column } = FILTER_COLUMN[dim];
    const read = await sums(ctx, q, q, column === 'path' ? 'page' : [column], 'none');
    rate = Math.min(rate, read.sampleRate);
    const values = await valuesOf(
      ctx.db,
      q.siteId,
      read.rows.map((r) => r.keys[0]!),
    );
    data[dim] = read.rows
      .flatMap((r: SumRow) => {
        const value = values.get(r.keys[0]!);
        return value !== undefined && r.visitors > 0 && (!needle || value.toLowerCase().includes(needle)) ? [{ value, visitors: r.visitors }] : [];
      })
      .sort((a, b) => b.visitors - a.visitors || a.value.localeCompare(b.value))
      .slice(0, q.limit);
  }
  return { data, meta: samplingOf(rate) };
}

export const MAX_EXPORT_ROWS = 5_000_000;
const EVENT_CSV_COLUMNS = [
  'timestamp',
  'session_id',
  'type',
  'path',
  'referrer',
  'source',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'country',
  'city',
  'device',
  'browser',
  'os',
  'language',
  'screen',
  'value',
  'x',
  'y',
  'selector',
  'target',
  'rage',
  'dead',
];
const SESSION_CSV_COLUMNS = [
  'id',
  'startedAt',
  'endedAt',
  'duration',
  'pageviews',
  'events',
  'entryPage',
  'exitPage',
  'bounced',
  'source',
  'referrer',
  'country',
  'city',
  'device',
  'browser',
  'os',
  'screen',
  'language',
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'utmTerm',
  'utmContent',
  'conversions',
];

/**
 * The export (design 5): RFC 4180 CSV, formula cells neutralised (decisions F2, `shared/csv.ts`),
 * streamed a chunk of rows at a time with their dictionary values.
 */
export async function* exportCsv(db: Executor, q: AnalyticsQuery, type: 'events' | 'sessions'): AsyncGenerator<string> {
  yield csvLine(type === 'events' ? EVENT_CSV_COLUMNS : SESSION_CSV_COLUMNS);
  const iso = (ms: unknown) => new Date(Number(ms)).toISOString();
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  for await (const chunk of exportRows(db, {
    siteId: q.siteId,
    type,
    fromDay: q.fromDay,
    toDay: q.toDay,
    utcFrom: q.utcFrom,
    utcTo: q.utcTo,
    filters: q.filters,
    max: MAX_EXPORT_ROWS,
  })) {
    const ids = chunk.flatMap((r) => [
      ...SESSION_DIMS.map((c) => Number(r[`s_${c}`] ?? 0)),
      ...(type === 'events' ? [Number(r.path ?? 0), Number(r.sel ?? 0), Number(r.target ?? 0)] : []),
    ]);
    const values = await valuesOf(db, q.siteId, ids);
    const v = (id: unknown) => (id === null || id === undefined ? null : (values.get(Number(id)) ?? null));
    const s = (r: Record<string, unknown>, c: string) => v(r[`s_${c}`]);
    let text = '';
    for (const r of chunk) {
      if (type === 'events') {
        const flags = Number(r.flags ?? 0);
        text += csvLine([
          iso(r.at),
          num(r.s_id),
          EVENT_TYPES[Number(r.type) - 1] ?? null,
          v(r.path),
          s(r, 'referrer'),
          s(r, 'source'),
          ...UTM_KEYS.map((k) => s(r, k)),
          s(r, 'country'),
          s(r, 'city'),
          s(r, 'device'),
          s(r, 'browser'),
          s(r, 'os'),
          s(r, 'language'),
          s(r, 'screen'),
          num(r.value),
          num(r.x),
          num(r.y),
          v(r.sel),
          v(r.target),
          (flags & FLAG_RAGE) !== 0,
          (flags & FLAG_DEAD) !== 0,
        ]);
      } else {
        text += csvLine([
          num(r.s_id),
          iso(r.s_started_at),
          iso(r.s_last_at),
          Math.round(Number(r.s_duration_ms) / 1000),
          num(r.s_pageviews),
          num(r.s_events),
          s(r, 'entry_path'),
          s(r, 'exit_path'),
          Number(r.s_bounce) === 1,
          s(r, 'source'),
          s(r, 'referrer'),
          s(r, 'country'),
          s(r, 'city'),
          s(r, 'device'),
          s(r, 'browser'),
          s(r, 'os'),
          s(r, 'screen'),
          s(r, 'language'),
          ...UTM_KEYS.map((k) => s(r, k)),
          num(r.s_conversions),
        ]);
      }
    }
    yield text;
  }
}
