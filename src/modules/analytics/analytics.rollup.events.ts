import { type RawBuilder, sql } from 'kysely';
import { FLAG_DEAD, FLAG_RAGE, TYPE_CODE } from './analytics.codes.js';

/**
 * The rollup dims built from events (design 3.2, decision AR1), besides part 1's session dims and
 * `page`. Each is one SELECT grouped by the sessions' local day, so the rebuild inserts it for one
 * day and a report runs the very same SELECT live over dirty days (or, filtered, over its whole
 * range): finished and changed days answer the same numbers (A7).
 *
 * Columns, in the rollup tables' order: day, dim, v1, v2, visitors, visits, pageviews, bounces,
 * duration_ms, engaged_ms, events, conversions.
 * - `weekday_hour`: v1 = ISO weekday × 24 + local hour of the session's start; session metrics.
 * - `outbound`, `download`: v1 = url; events (clicks), visitors, visits.
 * - `rage`, `dead`: v1 = path, v2 = selector; events (clicks), visitors, visits.
 * - `form`: v1 = form key; visits = sessions that started it (a submit implies a start),
 *   conversions = sessions that submitted it, duration_ms = summed first submit − first start of
 *   the sessions with both (submit not before start), events = how many such sessions.
 * - `scroll`: v1 = path, v2 = decile 0-10 of each pageview's max scroll depth (none sent: 0);
 *   pageviews, visitors, visits, duration_ms = summed depth %.
 * - `cwv_<METRIC>`: v1 = value on the grid (10 ms; CLS 0.001), v2 = device; events.
 */
export const CWV_METRICS = ['LCP', 'INP', 'CLS', 'FCP', 'TTFB', 'FID'] as const;
export type CwvMetric = (typeof CWV_METRICS)[number];
/** Grid step of a vital's stored value: v1 × step is the value. */
export const CWV_STEP: Record<CwvMetric, number> = { LCP: 10, INP: 10, CLS: 0.001, FCP: 10, TTFB: 10, FID: 10 };

export type EventDim = 'weekday_hour' | 'outbound' | 'download' | 'rage' | 'dead' | 'form' | 'scroll' | 'cwv';

/** Where rows come from: the site, its sessions' days, and (filtered reports) a condition on the session `s` and, for event dims, the event `e`. */
export interface RowScope {
  siteId: string;
  /** A condition on `s.day`, e.g. `s.day = 20000` or `s.day between a and b`. */
  days: RawBuilder<unknown>;
  filter?: RawBuilder<unknown>;
  /** The sessions' `from` clause (alias `s`) when a filter column's index drives the read; default the table. */
  sessions?: RawBuilder<unknown>;
  /** Pair rollups (decisions AR6): the filter values `f1`, `f2` (session columns; no second: 0) selected first and grouped by; only the dims of `PAIRED_EVENT_DIMS`. */
  pair?: readonly [RawBuilder<unknown>, RawBuilder<unknown> | null];
}

/** The event dims a pair rollup holds: the engagement report's, the weekday-hour heatmap's (AR6), scroll depth's, the vitals' and the forms' (AR8). */
export const PAIRED_EVENT_DIMS: readonly EventDim[] = ['weekday_hour', 'outbound', 'download', 'rage', 'dead', 'form', 'scroll', 'cwv'];
const pairSelect = (scope: RowScope) => (scope.pair ? sql`${scope.pair[0]} as f1, ${scope.pair[1] ?? sql`0`} as f2, ` : sql``);
// A constant is no GROUP BY term (SQLite reads an integer there as a column's position).
const pairGroup = (scope: RowScope) => (scope.pair ? sql`${scope.pair[0]}, ${scope.pair[1] ? sql`${scope.pair[1]}, ` : sql``}` : sql``);

/** A pair row's filter values selected (and grouped by) from an inner select `alias` that carries them as `f1`, `f2`. */
const pairOf = (scope: RowScope, alias: string) => (scope.pair ? sql`${sql.ref(`${alias}.f1`)}, ${sql.ref(`${alias}.f2`)}, ` : sql``);

const and = (cond: RawBuilder<unknown> | undefined) => (cond ? sql` and ${cond}` : sql``);
const sessionsOf = (scope: RowScope) => scope.sessions ?? sql`analytics_sessions s`;
const eventsOf = (scope: RowScope, join = sql``) =>
  sql`from ${sessionsOf(scope)} join analytics_events e on s.id = e.session_id ${join}
    where s.site_id = ${scope.siteId} and ${scope.days}${and(scope.filter)}`;

type Metric = 'visitors' | 'visits' | 'pageviews' | 'bounces' | 'duration_ms' | 'engaged_ms' | 'events' | 'conversions';
export const METRICS: readonly Metric[] = ['visitors', 'visits', 'pageviews', 'bounces', 'duration_ms', 'engaged_ms', 'events', 'conversions'];

/** A rollup row's select list: the named metrics, 0 for the others. */
function row(
  day: RawBuilder<unknown>,
  dim: RawBuilder<unknown>,
  v1: RawBuilder<unknown>,
  v2: RawBuilder<unknown>,
  metrics: Partial<Record<Metric, RawBuilder<unknown>>>,
) {
  const list = METRICS.map((m) => sql`${metrics[m] ?? sql`0`} as ${sql.ref(m)}`);
  return sql`${day} as day, ${dim} as dim, ${v1} as v1, ${v2} as v2, ${sql.join(list)}`;
}
const SESSION_METRICS = {
  visitors: sql`count(distinct s.visitor)`,
  visits: sql`count(*)`,
  pageviews: sql`sum(s.pageviews)`,
  bounces: sql`sum(s.bounce)`,
  duration_ms: sql`sum(s.duration_ms)`,
  events: sql`sum(s.events)`,
  conversions: sql`sum(s.conversions)`,
};
const CLICK_METRICS = { visitors: sql`count(distinct s.visitor)`, visits: sql`count(distinct s.id)`, events: sql`count(*)` };

/** One dim's SELECT (columns named as the rollup tables', `day` first). */
export function eventDimSelect(dim: EventDim, scope: RowScope): RawBuilder<unknown> {
  if (scope.pair && !PAIRED_EVENT_DIMS.includes(dim)) throw new Error(`no pair rollup of ${dim}`);
  switch (dim) {
    case 'weekday_hour':
      // Day 0 (1970-01-01) was a Thursday, ISO weekday 4.
      return sql`select ${pairSelect(scope)}${row(sql`s.day`, sql.lit(dim), sql`((s.day + 3) % 7 + 1) * 24 + s.hour`, sql`0`, SESSION_METRICS)}
        from ${sessionsOf(scope)} where s.site_id = ${scope.siteId} and ${scope.days}${and(scope.filter)}
        group by ${pairGroup(scope)}s.day, s.hour`;
    case 'outbound':
    case 'download':
      return sql`select ${pairSelect(scope)}${row(sql`s.day`, sql.lit(dim), sql`coalesce(e.target, 0)`, sql`0`, CLICK_METRICS)}
        ${eventsOf(scope)} and e.type = ${sql.lit(TYPE_CODE[dim])}
        group by ${pairGroup(scope)}s.day, e.target`;
    case 'rage':
    case 'dead':
      return sql`select ${pairSelect(scope)}${row(sql`s.day`, sql.lit(dim), sql`coalesce(e.path, 0)`, sql`coalesce(e.sel, 0)`, CLICK_METRICS)}
        ${eventsOf(scope)} and e.type = ${sql.lit(TYPE_CODE.click)} and (e.flags & ${sql.lit(dim === 'rage' ? FLAG_RAGE : FLAG_DEAD)}) <> 0
        group by ${pairGroup(scope)}s.day, e.path, e.sel`;
    case 'form':
      return sql`select ${pairOf(scope, 'f')}${row(sql`f.day`, sql.lit(dim), sql`f.form`, sql`0`, {
        visitors: sql`count(distinct f.visitor)`,
        visits: sql`count(*)`,
        duration_ms: sql`sum(case when f.started <= f.submitted then f.submitted - f.started else 0 end)`,
        events: sql`sum(case when f.started <= f.submitted then 1 else 0 end)`,
        conversions: sql`sum(case when f.submitted is null then 0 else 1 end)`,
      })}
        from (select ${pairSelect(scope)}s.day, s.visitor, s.id, coalesce(e.target, 0) as form,
            min(case when e.type = ${sql.lit(TYPE_CODE.form_start)} then e.ts end) as started,
            min(case when e.type = ${sql.lit(TYPE_CODE.form_submit)} then e.ts end) as submitted
          ${eventsOf(scope)} and e.type in (${sql.lit(TYPE_CODE.form_start)}, ${sql.lit(TYPE_CODE.form_submit)})
          group by ${pairGroup(scope)}s.day, s.visitor, s.id, e.target) f
        group by ${pairOf(scope, 'f')}f.day, f.form`;
    case 'scroll':
      // A pageview's depth is the deepest engagement of the same pageview id (imports without one: of its path in the session).
      // Joined from one grouped read of the engagements, not a subquery per pageview: that one scanned the whole session
      // for every pageview, quadratic in a long session (a flooded collector's one visitor: minutes for 100,000 events).
      return sql`select ${pairOf(scope, 'p')}${row(sql`p.day`, sql.lit(dim), sql`p.path`, sql`p.depth / 10`, {
        visitors: sql`count(distinct p.visitor)`,
        visits: sql`count(distinct p.session_id)`,
        pageviews: sql`count(*)`,
        duration_ms: sql`sum(p.depth)`,
      })}
        from (select ${pairSelect(scope)}s.day, s.visitor, e.session_id, coalesce(e.path, 0) as path, coalesce(g.depth, 0) as depth
          ${eventsOf(
            scope,
            sql`left join (select e.session_id, coalesce(e.pv, 0) as pv, coalesce(e.path, 0) as path, max(e.y) as depth
              ${eventsOf(scope)} and e.type = ${sql.lit(TYPE_CODE.engagement)}
              group by e.session_id, coalesce(e.pv, 0), coalesce(e.path, 0)) g
            on g.session_id = e.session_id and g.pv = coalesce(e.pv, 0) and g.path = coalesce(e.path, 0)`,
          )} and e.type = ${sql.lit(TYPE_CODE.pageview)}) p
        group by ${pairOf(scope, 'p')}p.day, p.path, p.depth / 10`;
    case 'cwv':
      // Values on the grid: half a step up rounds half away from zero on both databases (vitals are never negative).
      return sql`select ${pairSelect(scope)}${row(
        sql`s.day`,
        sql`'cwv_' || m.value`,
        sql`cast(floor(e.value / (case when m.value = 'CLS' then 0.001 else 10.0 end) + 0.5) as integer)`,
        sql`coalesce(s.device, 0)`,
        { events: sql`count(*)` },
      )}
        ${eventsOf(scope, sql`join analytics_values m on m.id = e.target`)} and e.type = ${sql.lit(TYPE_CODE.cwv)} and e.value is not null
        group by ${pairGroup(scope)}s.day, m.value, cast(floor(e.value / (case when m.value = 'CLS' then 0.001 else 10.0 end) + 0.5) as integer), s.device`;
  }
}

export const EVENT_DIMS: readonly EventDim[] = ['weekday_hour', 'outbound', 'download', 'rage', 'dead', 'form', 'scroll', 'cwv'];

/** The statements inserting the event dims of one site-day into `analytics_daily` (a step of the rebuild, after its delete); `sessions` the day's sessions as `s`. */
export function eventDimInserts(siteId: string, day: number, sessions: RawBuilder<unknown>): RawBuilder<unknown>[] {
  const scope: RowScope = { siteId, days: sql`s.day = ${day}`, sessions };
  return EVENT_DIMS.map(
    (dim) => sql`insert into analytics_daily (site_id, day, dim, v1, v2, ${sql.join(METRICS.map((m) => sql.ref(m)))})
      select ${siteId}, r.day, r.dim, r.v1, r.v2, ${sql.join(METRICS.map((m) => sql.ref(`r.${m}`)))} from (${eventDimSelect(dim, scope)}) r`,
  );
}
