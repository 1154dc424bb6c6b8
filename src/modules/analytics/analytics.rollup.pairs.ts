import { type RawBuilder, sql } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import type { DB, Executor } from '../../db/types.js';
import { TYPE_CODE } from './analytics.codes.js';
import { eventDimSelect, METRICS, PAIRED_EVENT_DIMS } from './analytics.rollup.events.js';
import { monthOf } from './analytics.time.js';

/**
 * Pair rollups (issue 32, decisions AR6): the dims of `analytics_daily` once more per value of a
 * common `is` filter, in `analytics_pair_daily` (and `analytics_pair_monthly`, months as sums of
 * days). A filtered report over a year then reads a few rows a day instead of its sessions.
 *
 * - Filters (`fdim`, values `f1`, `f2`): the session columns of few values that reports are
 *   filtered by most (country, device, browser, os, source), and country with device (the
 *   common two-filter view). Other filters, `!`, `~`, `path` and several values of a filter
 *   scan as before (several values: one visitor of a day could be counted under two values).
 * - Report dims: the session columns the reports list (not exit page, utm term and content),
 *   `page`, and the event dims of engagement, the weekday-hour heatmap, forms, scroll depth and
 *   the vitals (`form`, `scroll`, `cwv_*`: decisions AR8). A dim equal to one of
 *   the filter's columns is left out: a report filtered on its own column reads the filter's
 *   other columns' pair, narrowed to the value (`only`), or the plain rollup.
 * - Sessions without a value of the filter column are left out: `is` never matches them.
 *
 * Each row is the very GROUP BY a filtered scan runs per day (`analytics.sql.ts`, `liveSelect`
 * with the filter as condition), grouped by the filter's value too, so a finished day answers
 * exactly what the raw rows do; changed days are read live (A7).
 */
export const PAIR_FILTERS: ReadonlyArray<readonly string[]> = [['country'], ['device'], ['browser'], ['os'], ['source'], ['country', 'device']];
export const pairName = (columns: readonly string[]) => columns.join('+');

/** The session columns rolled up per filter value, each with its second column (v2) as in `analytics_daily`. */
export const PAIR_SESSION_DIMS: ReadonlyArray<readonly [string, string | null]> = [
  ['entry_path', null],
  ['source', null],
  ['referrer', 'source'],
  ['utm_source', null],
  ['utm_medium', null],
  ['utm_campaign', null],
  ['country', null],
  ['city', 'country'],
  ['device', null],
  ['browser', null],
  ['os', null],
  ['language', null],
  ['screen', null],
];
/** Every dim a pair rollup holds, besides the session columns. */
export const PAIR_OTHER_DIMS = ['page', ...PAIRED_EVENT_DIMS] as const;

/** A pair rollup row: a plain rollup row (`analytics_daily`'s columns) under a filter's name and values. */
type PairRollupColumns = Omit<DB['analytics_daily'], 'day'> & { fdim: string; f1: number; f2: number };
declare module '../../db/types.js' {
  interface DB {
    analytics_pair_daily: PairRollupColumns & { day: number };
    analytics_pair_monthly: PairRollupColumns & { month: number };
  }
}

const METRIC_LIST = sql.join(METRICS.map((m) => sql.ref(m)));
const INSERT = sql`insert into analytics_pair_daily (site_id, fdim, f1, f2, dim, day, v1, v2, ${METRIC_LIST})`;
const PV = TYPE_CODE.pageview;
const ENGAGEMENT = TYPE_CODE.engagement;

/** One filter's columns as the select list's `f1, f2`, its grouping and its "has a value" condition. */
function filterColumns(columns: readonly string[]) {
  const f1 = sql.ref(`s.${columns[0]}`);
  const f2 = columns[1] ? sql.ref(`s.${columns[1]}`) : null;
  const known = sql.join(
    columns.map((c) => sql`${sql.ref(`s.${c}`)} is not null`),
    sql` and `,
  );
  return { f1, f2, known, group: f2 ? sql`${f1}, ${f2}` : f1 };
}

/** The SELECTs of one site-day's pair rows, in `analytics_pair_daily`'s column order after `site_id`. */
function pairSelects(db: Executor, siteId: string, day: number): RawBuilder<unknown>[] {
  const out: RawBuilder<unknown>[] = [];
  // The day's sessions through the day index: grouped by a filter column, SQLite's planner picks that
  // column's index (it covers the day too) and reads the site's every session.
  const sessions = sql`analytics_sessions s ${dialectOf(db).indexedBy('analytics_sessions_day_idx')}`;
  for (const columns of PAIR_FILTERS) {
    const fdim = pairName(columns);
    const { f1, f2, known, group } = filterColumns(columns);
    const head = sql`${fdim} as fdim, ${f1} as f1, ${f2 ?? sql`0`} as f2`;
    for (const [dim, second] of PAIR_SESSION_DIMS) {
      if (columns.includes(dim)) continue;
      const v1 = sql.ref(`s.${dim}`);
      const v2 = second ? sql.ref(`s.${second}`) : null;
      out.push(sql`select ${head}, ${dim} as dim, s.day as day, coalesce(${v1}, 0) as v1, ${v2 ? sql`coalesce(${v2}, 0)` : sql`0`} as v2,
          count(distinct s.visitor) as visitors, count(*) as visits, sum(s.pageviews) as pageviews, sum(s.bounce) as bounces,
          sum(s.duration_ms) as duration_ms, 0 as engaged_ms, sum(s.events) as events, sum(case when s.conversions > 0 then 1 else 0 end) as conversions
        from ${sessions} where s.site_id = ${siteId} and s.day = ${day} and ${known}
        group by ${group}, s.day, ${v2 ? sql`${v1}, ${v2}` : v1}`);
    }
    out.push(sql`select ${head}, 'page' as dim, s.day as day, coalesce(e.path, 0) as v1, 0 as v2,
        count(distinct case when e.type = ${PV} then s.visitor end) as visitors,
        count(distinct case when e.type = ${PV} then s.id end) as visits,
        sum(case when e.type = ${PV} then 1 else 0 end) as pageviews,
        count(distinct case when s.bounce = 1 and s.entry_path = e.path then s.id end) as bounces,
        0 as duration_ms, coalesce(sum(case when e.type = ${ENGAGEMENT} then e.value else 0 end), 0) as engaged_ms,
        count(*) as events, 0 as conversions
      from ${sessions} join analytics_events e on e.session_id = s.id
      where s.site_id = ${siteId} and s.day = ${day} and e.type in (${PV}, ${ENGAGEMENT}) and ${known}
      group by ${group}, s.day, e.path`);
    for (const dim of PAIRED_EVENT_DIMS) {
      const select = eventDimSelect(dim, { siteId, days: sql`s.day = ${day}`, filter: known, sessions, pair: [f1, f2] });
      out.push(sql`select ${fdim} as fdim, r.f1, r.f2, r.dim, r.day, r.v1, r.v2, ${sql.join(METRICS.map((m) => sql.ref(`r.${m}`)))} from (${select}) r`);
    }
  }
  return out;
}

const KEY = sql`site_id, fdim, f1, f2, dim, month, v1, v2`;

/**
 * Adds (1) or takes away (-1) a site-day's pair rows to its month's: an upsert of the day's rows
 * alone, since a whole month's pair rows are many (a month refolded from its days on every
 * rebuild made the rebuild of a month's last day read ~30 days of rows).
 */
async function foldDay(trx: Executor, siteId: string, day: number, sign: 1 | -1): Promise<void> {
  const { month } = monthOf(day);
  await sql`insert into analytics_pair_monthly (${KEY}, ${METRIC_LIST})
    select site_id, fdim, f1, f2, dim, ${sql.lit(month)}, v1, v2, ${sql.join(METRICS.map((m) => sql`${sql.lit(sign)} * ${sql.ref(m)}`))}
    from analytics_pair_daily where site_id = ${siteId} and day = ${day}
    on conflict (${KEY}) do update set ${sql.join(METRICS.map((m) => sql`${sql.ref(m)} = ${sql.ref(`analytics_pair_monthly.${m}`)} + excluded.${sql.ref(m)}`))}`.execute(
    trx,
  );
  if (sign < 0)
    // Month rows the day alone made are empty now (every stored row counts a visit, a pageview or an event).
    await sql`delete from analytics_pair_monthly where (${KEY}) in (
        select site_id, fdim, f1, f2, dim, ${sql.lit(month)}, v1, v2 from analytics_pair_daily where site_id = ${siteId} and day = ${day})
      and visits = 0 and pageviews = 0 and events = 0`.execute(trx);
}

/**
 * Rebuilds one site-day's pair rows and their month's sums (inside the rebuild's transaction): a
 * step of its own beside the plain rollups', so the rebuild's machinery stays the same. The month
 * takes the old rows away and the new ones in, so it stays the sum of its days.
 */
export async function rebuildPairs(trx: Executor, siteId: string, day: number): Promise<void> {
  await foldDay(trx, siteId, day, -1);
  await trx.deleteFrom('analytics_pair_daily').where('site_id', '=', siteId).where('day', '=', day).execute();
  for (const select of pairSelects(trx, siteId, day)) await sql`${INSERT} select ${siteId}, x.* from (${select}) x`.execute(trx);
  await foldDay(trx, siteId, day, 1);
}

/** Retention: deletes up to `limit` pair rows of days before `beforeDay` (and of months wholly before it). */
export async function prunePairs(db: Executor, siteId: string, beforeDay: number, limit: number): Promise<number> {
  const daily = await sql`delete from analytics_pair_daily where (site_id, fdim, f1, f2, dim, day, v1, v2) in (
      select site_id, fdim, f1, f2, dim, day, v1, v2 from analytics_pair_daily where site_id = ${siteId} and day < ${beforeDay} limit ${limit})`.execute(db);
  const monthly = await sql`delete from analytics_pair_monthly where (site_id, fdim, f1, f2, dim, month, v1, v2) in (
      select site_id, fdim, f1, f2, dim, month, v1, v2 from analytics_pair_monthly where site_id = ${siteId} and month < ${monthOf(beforeDay).month} limit ${limit})`.execute(
    db,
  );
  return Number(daily.numAffectedRows ?? 0) + Number(monthly.numAffectedRows ?? 0);
}
