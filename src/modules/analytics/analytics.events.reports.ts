import type { Executor } from '../../db/types.js';
import { notFound } from '../../shared/errors.js';
import { EVENT_TYPES, FLAG_DEAD, FLAG_RAGE } from './analytics.codes.js';
import * as q from './analytics.events.sql.js';
import type { DimRange, DimRow, SessionRow } from './analytics.events.sql.js';
import { CWV_METRICS, CWV_STEP, type CwvMetric } from './analytics.rollup.events.js';
import { valuesOf } from './analytics.sql.js';
import { dateOfDay } from './analytics.time.js';

/**
 * The event reports (design 5: realtime, engagement, forms, Core Web Vitals, sessions and their
 * timelines, the weekday-hour heatmap, click heatmaps and scroll depth): rules and arithmetic on
 * the rows `analytics.events.sql.ts` reads. Percents have one decimal, rounded half away from
 * zero; durations are whole seconds.
 */
const MINUTE_MS = 60_000;
export const REALTIME_WINDOW_MS = 5 * MINUTE_MS;
export const REALTIME_MINUTES = 30;
const MAX_REALTIME_PAGES = 100;
export const MAX_HEATMAP_POINTS = 5000;
export const MAX_HEATMAP_ELEMENTS = 100;

/** `part` of `whole` in percent, one decimal (0 without a whole). Integer arithmetic first, so halves round away from zero exactly. */
export const percent = (part: number, whole: number) => (whole ? Math.round((part * 1000) / whole) / 10 : 0);
const seconds = (ms: number) => Math.round(ms / 1000);
const iso = (ms: number) => new Date(ms).toISOString();

/** Names of dictionary ids, null for none (0). */
async function namer(db: Executor, siteId: string, ids: Iterable<number>) {
  const values = await valuesOf(db, siteId, ids);
  return (id: number) => (id ? (values.get(id) ?? null) : null);
}

/** Sorts rows by a numeric or text key, ties by `tie` ascending. */
function sortRows<T>(rows: T[], key: (r: T) => number | string | null, order: 'asc' | 'desc', tie: (r: T) => string) {
  const dir = order === 'asc' ? 1 : -1;
  return rows.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * dir;
    }
    return tie(a).localeCompare(tie(b));
  });
}

export interface Paging {
  page: number;
  limit: number;
}
export function pageOf<T>(rows: T[], p: Paging) {
  const total = rows.length;
  return {
    data: rows.slice((p.page - 1) * p.limit, p.page * p.limit),
    meta: { total, perPage: p.limit, currentPage: p.page, lastPage: Math.max(1, Math.ceil(total / p.limit)) },
  };
}

// ---- realtime (R) ----

export async function realtime(db: Executor, siteId: string, now: number) {
  const active = await q.activeSessions(db, siteId, now - REALTIME_WINDOW_MS, now);
  // Each visitor counts once, on the path of their latest pageview.
  const latest = new Map<string, { exitPath: number; lastAt: number }>();
  for (const s of active) {
    const seen = latest.get(s.visitor);
    if (!seen || s.lastAt > seen.lastAt) latest.set(s.visitor, s);
  }
  const byPath = new Map<number, number>();
  for (const s of latest.values()) byPath.set(s.exitPath, (byPath.get(s.exitPath) ?? 0) + 1);
  const name = await namer(db, siteId, byPath.keys());
  const pages = sortRows(
    [...byPath].map(([id, visitors]) => ({ path: name(id), visitors })),
    (r) => r.visitors,
    'desc',
    (r) => r.path ?? '',
  ).slice(0, MAX_REALTIME_PAGES);
  return { visitors: latest.size, pages };
}

export async function realtimePageviews(db: Executor, siteId: string, now: number) {
  const current = Math.floor(now / MINUTE_MS);
  const first = current - REALTIME_MINUTES + 1;
  const counts = await q.pageviewsByMinute(db, siteId, first * MINUTE_MS, (current + 1) * MINUTE_MS);
  return Array.from({ length: REALTIME_MINUTES }, (_, i) => ({ minute: iso((first + i) * MINUTE_MS), pageviews: counts.get(first + i) ?? 0 }));
}

// ---- engagement ----

export async function engagement(db: Executor, range: DimRange, limit: number) {
  const rows = await q.readEventDims(db, range, ['outbound', 'download', 'rage', 'dead']);
  const of = (dim: string) => rows.filter((r) => r.dim === dim);
  const name = await namer(
    db,
    range.siteId,
    rows.flatMap((r) => [r.v1, r.v2]),
  );
  const total = (dim: string) => of(dim).reduce((n, r) => n + r.events, 0);
  const elements = (dim: string) =>
    sortRows(
      of(dim).map((r) => ({ path: name(r.v1), selector: name(r.v2), clicks: r.events, sessions: r.visits })),
      (r) => r.clicks,
      'desc',
      (r) => `${r.path}\u0000${r.selector}`,
    ).slice(0, limit);
  const links = (dim: string) =>
    sortRows(
      of(dim).map((r) => ({ url: name(r.v1), clicks: r.events, visitors: r.visitors })),
      (r) => r.clicks,
      'desc',
      (r) => r.url ?? '',
    ).slice(0, limit);
  return {
    rageClicks: total('rage'),
    deadClicks: total('dead'),
    outboundClicks: total('outbound'),
    fileDownloads: total('download'),
    rageElements: elements('rage'),
    deadElements: elements('dead'),
    outboundLinks: links('outbound'),
    downloads: links('download'),
  };
}

// ---- forms ----

export const FORM_SORT = ['starts', 'submissions', 'abandonmentRate'] as const;
export type FormSort = (typeof FORM_SORT)[number];

/** Cairn forms of the site by slug (the forms module's list, through its public interface). */
export type FormsBySlug = (slugs: string[]) => Promise<Map<string, { id: number; name: string }>>;

export async function formsAnalytics(db: Executor, range: DimRange, list: Paging & { sortBy?: FormSort; sortOrder: 'asc' | 'desc' }, formsBySlug: FormsBySlug) {
  const rows = await q.readEventDims(db, range, ['form']);
  const name = await namer(
    db,
    range.siteId,
    rows.map((r) => r.v1),
  );
  const keys = rows.map((r) => name(r.v1)).filter((k): k is string => k !== null);
  const cairn = keys.length ? await formsBySlug(keys) : new Map<string, { id: number; name: string }>();
  const items = rows.map((r) => {
    const form = name(r.v1);
    const known = form === null ? undefined : cairn.get(form);
    return {
      form,
      formId: known?.id ?? null,
      name: known?.name ?? null,
      starts: r.visits,
      submissions: r.conversions,
      abandonmentRate: percent(Math.max(0, r.visits - r.conversions), r.visits),
      avgCompletionSeconds: r.events ? seconds(r.duration_ms / r.events) : null,
    };
  });
  const sortBy = list.sortBy ?? 'starts';
  return pageOf(
    sortRows(
      items,
      (r) => r[sortBy],
      list.sortOrder,
      (r) => r.form ?? '',
    ),
    list,
  );
}

// ---- Core Web Vitals ----

/** web-vitals' thresholds (design 0): good ≤ the first, poor > the second. */
export const CWV_THRESHOLDS: Record<CwvMetric, [number, number]> = {
  LCP: [2500, 4000],
  INP: [200, 500],
  CLS: [0.1, 0.25],
  FCP: [1800, 3000],
  TTFB: [800, 1800],
  FID: [100, 300],
};

/** A grid index as the value it stands for (CLS in thousandths, so 0.1 stays 0.1). */
const gridValue = (metric: CwvMetric, v1: number) => (metric === 'CLS' ? v1 / 1000 : v1 * CWV_STEP[metric]);

type Rating = 'good' | 'needs-improvement' | 'poor';

export function vitalOf(metric: CwvMetric, rows: DimRow[]) {
  const counts = new Map<number, number>();
  for (const r of rows) counts.set(r.v1, (counts.get(r.v1) ?? 0) + r.events);
  const grid = [...counts].sort((a, b) => a[0] - b[0]);
  const samples = grid.reduce((n, [, c]) => n + c, 0);
  const [goodMax, poorAbove] = CWV_THRESHOLDS[metric].map((t) => Math.round(t / CWV_STEP[metric])) as [number, number];
  let good = 0;
  let poor = 0;
  let p75: number | null = null;
  // Nearest rank: the smallest value with at least ⌈0.75 n⌉ samples at or below it.
  const rank = Math.ceil(0.75 * samples);
  let seen = 0;
  for (const [v, c] of grid) {
    if (v <= goodMax) good += c;
    else if (v > poorAbove) poor += c;
    seen += c;
    if (p75 === null && samples && seen >= rank) p75 = v;
  }
  const rating: Rating | null = p75 === null ? null : p75 <= goodMax ? 'good' : p75 > poorAbove ? 'poor' : 'needs-improvement';
  return {
    metric,
    unit: metric === 'CLS' ? ('score' as const) : ('ms' as const),
    p75: p75 === null ? null : gridValue(metric, p75),
    rating,
    samples,
    good: percent(good, samples),
    needsImprovement: percent(samples - good - poor, samples),
    poor: percent(poor, samples),
  };
}

export async function coreWebVitals(db: Executor, range: DimRange) {
  const rows = await q.readEventDims(db, range, ['cwv']);
  return CWV_METRICS.map((m) =>
    vitalOf(
      m,
      rows.filter((r) => r.dim === `cwv_${m}`),
    ),
  );
}

// ---- sessions (R) ----

export async function sessionRows(db: Executor, siteId: string, rows: SessionRow[]) {
  const name = await namer(
    db,
    siteId,
    rows.flatMap((r) => [
      r.entry_path,
      r.exit_path,
      r.source,
      r.referrer,
      r.country,
      r.city,
      r.device,
      r.browser,
      r.os,
      r.screen,
      r.language,
      r.utm_source,
      r.utm_medium,
      r.utm_campaign,
    ]),
  );
  return rows.map((r) => ({
    id: r.id,
    startedAt: iso(r.started_at),
    endedAt: iso(r.last_at),
    duration: seconds(r.duration_ms),
    pageviews: r.pageviews,
    events: r.events,
    entryPage: name(r.entry_path),
    exitPage: name(r.exit_path),
    bounced: r.bounce === 1,
    source: name(r.source) ?? 'direct',
    referrer: name(r.referrer),
    country: name(r.country),
    city: name(r.city),
    device: name(r.device),
    browser: name(r.browser),
    os: name(r.os),
    screen: name(r.screen),
    language: name(r.language),
    utmSource: name(r.utm_source),
    utmMedium: name(r.utm_medium),
    utmCampaign: name(r.utm_campaign),
    conversions: r.conversions,
  }));
}

export async function sessionsList(db: Executor, range: DimRange, list: Paging & { sortBy?: keyof typeof q.SESSION_SORT; sortOrder: 'asc' | 'desc' }) {
  const { rows, total } = await q.listSessions(db, range, {
    offset: (list.page - 1) * list.limit,
    limit: list.limit,
    sort: list.sortBy ?? 'startedAt',
    order: list.sortOrder,
  });
  return {
    data: await sessionRows(db, range.siteId, rows),
    meta: { total, perPage: list.limit, currentPage: list.page, lastPage: Math.max(1, Math.ceil(total / list.limit)) },
  };
}

/** A session and its events in time order; 404 when unknown, another site's, or past raw retention (G4: one body). */
export async function sessionTimeline(db: Executor, siteId: string, sessionId: number, rawFromDay: number) {
  const session = await q.findSession(db, siteId, sessionId, rawFromDay);
  if (!session) throw notFound('session');
  const events = await q.sessionEvents(db, siteId, sessionId);
  const name = await namer(
    db,
    siteId,
    events.flatMap((e) => [e.path, e.sel, e.target]),
  );
  const [row] = await sessionRows(db, siteId, [session]);
  return {
    session: row!,
    events: events.map((e) => {
      const type = EVENT_TYPES[e.type - 1]!;
      const base = { type, timestamp: iso(e.ts), path: name(e.path) };
      switch (type) {
        case 'engagement':
          return { ...base, engagedSeconds: seconds(e.value ?? 0), scrollDepth: e.y };
        case 'click':
          return { ...base, selector: name(e.sel), x: e.x, y: e.y, rage: (e.flags & FLAG_RAGE) !== 0, dead: (e.flags & FLAG_DEAD) !== 0 };
        case 'outbound':
        case 'download':
          return { ...base, url: name(e.target) };
        case 'form_start':
        case 'form_submit':
          return { ...base, form: name(e.target) };
        case 'goal':
          return { ...base, goal: name(e.target), value: e.value };
        case 'cwv':
          return { ...base, metric: name(e.target), value: e.value };
        default:
          return base;
      }
    }),
  };
}

export async function weekdayHours(db: Executor, range: DimRange) {
  const rows = await q.readEventDims(db, range, ['weekday_hour']);
  const cells = new Map(rows.map((r) => [r.v1, r.visits]));
  return Array.from({ length: 168 }, (_, i) => {
    const weekday = Math.floor(i / 24) + 1;
    const hour = i % 24;
    return { weekday, hour, sessions: cells.get(weekday * 24 + hour) ?? 0 };
  });
}

// ---- heatmaps (R) ----

export async function clickHeatmap(db: Executor, range: DimRange, path: string) {
  const pathId = await q.valueId(db, range.siteId, 'path', path);
  if (pathId === undefined) return { path, clicks: 0, points: [], elements: [] };
  const found = await q.clickHeatmap(db, range, pathId, MAX_HEATMAP_POINTS, MAX_HEATMAP_ELEMENTS);
  const name = await namer(
    db,
    range.siteId,
    found.elements.map((e) => e.sel),
  );
  return {
    path,
    clicks: found.clicks,
    points: found.points.map((p) => ({ x: p.gx / 100, y: p.gy * 10, count: p.count })),
    elements: found.elements.map((e) => ({ selector: name(e.sel), clicks: e.clicks, rageClicks: e.rage, deadClicks: e.dead })),
  };
}

export async function scrollDepth(db: Executor, range: DimRange, path: string) {
  const pathId = await q.valueId(db, range.siteId, 'path', path);
  const rows = pathId === undefined ? [] : await q.readEventDims(db, range, ['scroll'], pathId);
  const pageviews = rows.reduce((n, r) => n + r.pageviews, 0);
  const depthSum = rows.reduce((n, r) => n + r.duration_ms, 0);
  return {
    path,
    pageviews,
    averageDepth: pageviews ? Math.round((depthSum * 10) / pageviews) / 10 : 0,
    depths: Array.from({ length: 10 }, (_, i) => ({
      depth: (i + 1) * 10,
      percentage: percent(
        rows.filter((r) => r.v2 >= i + 1).reduce((n, r) => n + r.pageviews, 0),
        pageviews,
      ),
    })),
  };
}

export const rawDataFrom = (rawFromDay: number) => dateOfDay(rawFromDay);
