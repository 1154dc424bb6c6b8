import { type RawBuilder, sql } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import type { Executor } from '../../db/types.js';
import type { AnalyticsFilter, FilterDim } from './analytics.query.js';
import { PAIR_FILTERS, PAIR_SESSION_DIMS, pairName } from './analytics.rollup.pairs.js';
import { ROLLUP_PAIR, type SessionDim, TYPE_CODE } from './analytics.store.js';
import { monthOf } from './analytics.time.js';

/**
 * The reports' reads (design 3.4): one `AnalyticsQuery`'s range, filters and grouping become
 * one statement. Clean whole months come from `analytics_monthly`, other clean days from
 * `analytics_daily`, dirty days from the same GROUP BY the rebuild runs, live on the raw rows;
 * the parts are summed by one `UNION ALL`. Filters a rollup cannot answer scan the sessions (and
 * events for `path`), sampled above the threshold. Dialect differences (case-insensitive
 * contains) come from `db/dialect.ts`; nothing else differs between SQLite and PostgreSQL.
 */

/** The sums every metric of a report is computed from (in TypeScript, the same for every source). */
export interface Sums {
  visitors: number;
  visits: number;
  pageviews: number;
  bounces: number;
  duration_ms: number;
  engaged_ms: number;
  events: number;
  conversions: number;
}
export const SUM_COLUMNS = ['visitors', 'visits', 'pageviews', 'bounces', 'duration_ms', 'engaged_ms', 'events', 'conversions'] as const;

export interface SumRow extends Sums {
  /** none: 0; day: the local day; hour: day × 24 + hour; month: YYYYMM. */
  bucket: number;
  /** Dictionary ids of the grouped columns (0 = unknown). */
  keys: number[];
}

export type Bucket = 'none' | 'day' | 'hour' | 'month';

export interface ReadSpec {
  siteId: string;
  fromDay: number;
  toDay: number;
  filters: readonly AnalyticsFilter[];
  /** null: the site's totals; 'page': per path from the events; else the session columns grouped. */
  group: null | 'page' | readonly SessionDim[];
  bucket: Bucket;
  /** Leave out sessions without a value of any grouped column (campaigns). */
  knownOnly?: boolean;
  /** Rows a scan may read exactly; beyond, it samples (decisions A7). */
  sampleThreshold: number;
}

export interface ReadResult {
  rows: SumRow[];
  /** 1 when exact; else the share of sessions read (1/k). */
  sampleRate: number;
}

/** The session column and dictionary namespace of each filter name. */
export const FILTER_COLUMN: Record<FilterDim, { column: SessionDim | 'path'; dict: string }> = {
  browser: { column: 'browser', dict: 'browser' },
  os: { column: 'os', dict: 'os' },
  device: { column: 'device', dict: 'device' },
  country: { column: 'country', dict: 'country' },
  city: { column: 'city', dict: 'city' },
  referrer: { column: 'referrer', dict: 'referrer' },
  traffic_source: { column: 'source', dict: 'source' },
  language: { column: 'language', dict: 'language' },
  entry_page: { column: 'entry_path', dict: 'path' },
  utm_source: { column: 'utm_source', dict: 'utm_source' },
  utm_medium: { column: 'utm_medium', dict: 'utm_medium' },
  utm_campaign: { column: 'utm_campaign', dict: 'utm_campaign' },
  path: { column: 'path', dict: 'path' },
};

/** The dictionary namespace of a session column. */
export const dictOf = (column: SessionDim): string => (column === 'entry_path' || column === 'exit_path' ? 'path' : column);

const PV = TYPE_CODE.pageview;
const ENGAGEMENT = TYPE_CODE.engagement;
/**
 * The session columns with an index `(site_id, column, sample, day)` (migration 0036): an `is`
 * filter on one narrows a scan. Ordered by how many values a column usually has, most first:
 * where no counts are at hand (the event reports), the first one filtered drives the scan.
 */
const INDEXED_BY_VALUES = [
  'entry_path',
  'city',
  'referrer',
  'utm_campaign',
  'utm_source',
  'utm_medium',
  'language',
  'country',
  'os',
  'browser',
  'source',
  'device',
] as const;
export const INDEXED_FILTER_COLUMNS: ReadonlySet<string> = new Set(INDEXED_BY_VALUES);

/** The index a filtered read drives from: SQL naming it for `from`, and its column (null: none, the day index). */
function sessionsFrom(db: Executor, driver: string | null): RawBuilder<unknown> {
  return driver ? sql`analytics_sessions s ${dialectOf(db).indexedBy(`analytics_sessions_${driver}_idx`)}` : sql`analytics_sessions s`;
}

/**
 * The filters of a read without rollup counts at hand (the event reports): the condition, the
 * sessions' `from` through the index of the most-valued column with an `is` filter, and the day
 * range as a condition on that index's rows (decisions AR5), and the pair rollup's filter when
 * one stands for the filters (decisions AR6).
 */
export function narrowedRead(
  db: Executor,
  siteId: string,
  filters: readonly AnalyticsFilter[],
  pathOnEvents: boolean,
): { filter: RawBuilder<unknown>; sessions: RawBuilder<unknown>; dayColumn: RawBuilder<unknown>; pair?: PairKey } {
  const pair = pairKeyOf(siteId, filters);
  const filtered = new Set(filters.filter((f) => f.op === 'is').map((f) => FILTER_COLUMN[f.dim].column as string));
  const driver = INDEXED_BY_VALUES.find((c) => filtered.has(c)) ?? null;
  return {
    filter: filterCondition(db, siteId, filters, pathOnEvents, driver),
    sessions: sessionsFrom(db, driver),
    dayColumn: driver ? sql`+s.day` : sql`s.day`,
    ...(pair ? { pair } : {}),
  };
}
/** sample = visitor & 63 (the store), so a sample is 1/k of the visitors for k a power of two up to 64. */
const MAX_SAMPLE_K = 64;

/** The dictionary ids a filter entry names, as a subquery. */
function valueIds(db: Executor, siteId: string, dict: string, filter: AnalyticsFilter): RawBuilder<unknown> {
  const match =
    filter.op === 'contains'
      ? sql.join(
          filter.values.map((v) => dialectOf(db).containsText(['value'], v)),
          sql` or `,
        )
      : sql`value in (${sql.join(filter.values)})`;
  return sql`(select id from analytics_values where site_id = ${siteId} and dim = ${dict} and (${match}))`;
}

/**
 * The filters as one condition on sessions `s` (and events `e` for `path` when `pathOnEvents`):
 * per name, its `is` and `contains` entries OR and its `is_not` entries exclude; names AND.
 * `path` on sessions means a pageview of the session on such a path.
 */
export function filterCondition(
  db: Executor,
  siteId: string,
  filters: readonly AnalyticsFilter[],
  pathOnEvents: boolean,
  driver: string | null = null,
): RawBuilder<unknown> {
  const byDim = new Map<FilterDim, AnalyticsFilter[]>();
  for (const f of filters) (byDim.get(f.dim) ?? byDim.set(f.dim, []).get(f.dim)!).push(f);
  const parts: RawBuilder<unknown>[] = [];
  for (const [dim, list] of byDim) {
    const { column, dict } = FILTER_COLUMN[dim];
    const test = (f: AnalyticsFilter): RawBuilder<unknown> => {
      const ids = valueIds(db, siteId, dict, f);
      // `+` keeps the planner off a column's index when another one drives the scan (decisions AR5).
      if (column !== 'path') return column === driver || driver === null ? sql`s.${sql.ref(column)} in ${ids}` : sql`+s.${sql.ref(column)} in ${ids}`;
      if (pathOnEvents) return sql`e.path in ${ids}`;
      return sql`exists (select 1 from analytics_events pe where pe.session_id = s.id and pe.type = ${PV} and pe.path in ${ids})`;
    };
    const positive = list.filter((f) => f.op !== 'is_not');
    if (positive.length) parts.push(sql`(${sql.join(positive.map(test), sql` or `)})`);
    for (const f of list.filter((x) => x.op === 'is_not')) {
      const nullable = column !== 'path' ? sql`s.${sql.ref(column)} is null or ` : pathOnEvents ? sql`e.path is null or ` : sql``;
      parts.push(sql`(${nullable}not ${test(f)})`);
    }
  }
  return parts.length ? sql.join(parts, sql` and `) : sql`1 = 1`;
}

/** A pair rollup's filter (decisions AR6): its name and its values' ids, as subqueries (an unknown value is null and matches no row). */
export interface PairKey {
  fdim: string;
  f1: RawBuilder<unknown>;
  f2: RawBuilder<unknown>;
}

/**
 * The pair rollup filter that stands for `filters`, or null: each filter one `is` value of a
 * session column, and together exactly the columns of one of `PAIR_FILTERS` (several values are
 * a scan: a visitor of a day can be under two of them).
 */
export function pairKeyOf(siteId: string, filters: readonly AnalyticsFilter[]): PairKey | null {
  if (!filters.length || filters.some((f) => f.op !== 'is' || f.values.length !== 1)) return null;
  const byColumn = new Map(filters.map((f) => [FILTER_COLUMN[f.dim].column as string, f]));
  if (byColumn.size !== filters.length) return null;
  const columns = PAIR_FILTERS.find((c) => c.length === byColumn.size && c.every((x) => byColumn.has(x)));
  if (!columns) return null;
  const id = (column: string | undefined) => {
    if (!column) return sql`0`;
    const f = byColumn.get(column)!;
    return sql`(select id from analytics_values where site_id = ${siteId} and dim = ${FILTER_COLUMN[f.dim].dict} and value = ${f.values[0]!})`;
  };
  return { fdim: pairName(columns), f1: id(columns[0]), f2: id(columns[1]) };
}

const PAIR_DIMS: ReadonlySet<string> = new Set([...PAIR_SESSION_DIMS.map(([d]) => d), 'page']);

interface RollupPlan {
  dim: string;
  paired: boolean;
  only?: { dict: string; filter: AnalyticsFilter };
  /** Read `analytics_pair_*` rows of this filter instead of the plain rollups. */
  pair?: PairKey;
}

/**
 * A pair rollup read of `dim` (decisions AR6): the filters on the dim's own column narrow its
 * values (`only`, one `is` entry; `single`: one value), the others must be a pair filter.
 */
function pairPlan(spec: ReadSpec, dim: string, paired: boolean, single: boolean): RollupPlan | null {
  if (!PAIR_DIMS.has(dim)) return null;
  const ownColumn = dim === 'page' ? 'path' : dim;
  const own = spec.filters.filter((f) => FILTER_COLUMN[f.dim].column === ownColumn);
  const rest = spec.filters.filter((f) => FILTER_COLUMN[f.dim].column !== ownColumn);
  if (own.length > 1 || (own[0] && (own[0].op !== 'is' || (single && own[0].values.length !== 1)))) return null;
  const pair = pairKeyOf(spec.siteId, rest);
  if (!pair || pair.fdim.split('+').includes(dim)) return null;
  return { dim, paired, pair, ...(own[0] ? { only: { dict: FILTER_COLUMN[own[0].dim].dict, filter: own[0] } } : {}) };
}

/** Which rollup dimension answers a read, and which of its values, or null when it needs a scan (design 3.4). */
function rollupPlan(spec: ReadSpec): RollupPlan | null {
  if (spec.bucket === 'hour') return null;
  let dim: string;
  let paired = false;
  if (spec.group === null) dim = 'total';
  else if (spec.group === 'page') dim = 'page';
  else if (spec.group.length === 1 || (spec.group.length === 2 && ROLLUP_PAIR[spec.group[0]!] === spec.group[1])) {
    dim = spec.group[0]!;
    paired = spec.group.length === 2;
  } else return null;
  if (spec.filters.length === 0) return { dim, paired };
  const single = spec.filters.length === 1 && spec.filters[0]!.op === 'is' ? spec.filters[0]! : null;
  if (single) {
    const { column, dict } = FILTER_COLUMN[single.dim];
    // One `is` filter: the totals from the filtered dimension's rows; a breakdown filtered on its own dimension.
    // Exact only for one value of an unpaired dimension: a visitor of a day can be in two rows otherwise.
    if (dim === 'total' && column !== 'path' && !ROLLUP_PAIR[column] && single.values.length === 1)
      return { dim: column, paired: false, only: { dict, filter: single } };
    if ((dim === 'page' && column === 'path') || dim === column) return { dim, paired, only: { dict, filter: single } };
  }
  if (dim !== 'total') return pairPlan(spec, dim, paired, false);
  // Totals: one filter's column is the dim (its one value the row), the others the pair filter.
  for (const f of spec.filters) {
    const { column } = FILTER_COLUMN[f.dim];
    if (column === 'path' || ROLLUP_PAIR[column as SessionDim]) continue;
    const plan = pairPlan(spec, column, false, true);
    if (plan) return plan;
  }
  return null;
}

const metricsOfSessions = sql`count(distinct s.visitor) as visitors, count(*) as visits, sum(s.pageviews) as pageviews, sum(s.bounce) as bounces,
  sum(s.duration_ms) as duration_ms, 0 as engaged_ms, sum(s.events) as events, sum(case when s.conversions > 0 then 1 else 0 end) as conversions`;
const metricsOfPages = sql`count(distinct case when e.type = ${PV} then s.visitor end) as visitors,
  count(distinct case when e.type = ${PV} then s.id end) as visits,
  sum(case when e.type = ${PV} then 1 else 0 end) as pageviews,
  count(distinct case when s.bounce = 1 and s.entry_path = e.path then s.id end) as bounces,
  0 as duration_ms,
  coalesce(sum(case when e.type = ${ENGAGEMENT} then e.value else 0 end), 0) as engaged_ms,
  count(*) as events, 0 as conversions`;

const keyAliases = (n: number) => Array.from({ length: n }, (_, i) => sql.raw(`k${i + 1}`));

/**
 * The same GROUP BY as the rebuild, on raw rows: per day (visitors are distinct per day, design
 * 3.2) and per key. `days` restricts the days (a range, or the dirty ones).
 */
function liveSelect(
  db: Executor,
  spec: ReadSpec,
  days: RawBuilder<unknown>,
  keyCount: number,
  sample: number[] | null,
  driver: string | null = null,
): RawBuilder<unknown> {
  const bucket = spec.bucket === 'hour' ? sql`s.day * 24 + s.hour` : sql`s.day`;
  const sampled = sample ? sql` and s.sample in (${sql.join(sample)})` : sql``;
  const sessions = sessionsFrom(db, driver);
  if (spec.group === 'page') {
    return sql`select ${bucket} as bucket, coalesce(e.path, 0) as k1, 0 as k2, ${metricsOfPages}
      from ${sessions} join analytics_events e on e.session_id = s.id
      where s.site_id = ${spec.siteId} and ${days}${sampled} and e.type in (${PV}, ${ENGAGEMENT}) and ${filterCondition(db, spec.siteId, spec.filters, true, driver)}
      group by ${bucket}, e.path`;
  }
  const columns = spec.group ?? [];
  const keys = keyAliases(keyCount).map((alias, i) => (columns[i] ? sql`coalesce(s.${sql.ref(columns[i]!)}, 0) as ${alias}` : sql`0 as ${alias}`));
  const known =
    spec.knownOnly && columns.length
      ? sql` and ${sql.join(
          columns.map((c) => sql`s.${sql.ref(c)} is not null`),
          sql` and `,
        )}`
      : sql``;
  const groupBy = [bucket, ...columns.map((c) => sql`s.${sql.ref(c)}`)];
  return sql`select ${bucket} as bucket, ${sql.join(keys)}, ${metricsOfSessions}
    from ${sessions}
    where s.site_id = ${spec.siteId} and ${days}${sampled}${known} and ${filterCondition(db, spec.siteId, spec.filters, false, driver)}
    group by ${sql.join(groupBy)}`;
}

function toRows(raw: Array<Record<string, unknown>>, keyCount: number, scale: number): SumRow[] {
  return raw.map((r) => {
    const row = { bucket: Number(r.bucket), keys: Array.from({ length: keyCount }, (_, i) => Number(r[`k${i + 1}`] ?? 0)) } as SumRow;
    for (const c of SUM_COLUMNS) row[c] = Number(r[c] ?? 0) * scale;
    return row;
  });
}

/** Rows of equal bucket and keys summed, and buckets mapped to the spec's (days to months). */
function merge(rows: SumRow[], bucket: Bucket): SumRow[] {
  const out = new Map<string, SumRow>();
  for (const r of rows) {
    const b = bucket === 'none' ? 0 : bucket === 'month' && r.bucket < 0 ? -r.bucket : bucket === 'month' ? monthOf(r.bucket).month : r.bucket;
    const key = `${b}|${r.keys.join(',')}`;
    const found = out.get(key);
    if (!found) out.set(key, { ...r, bucket: b });
    else for (const c of SUM_COLUMNS) found[c] += r[c];
  }
  return [...out.values()];
}

/**
 * Whether a pair rollup read beats a scan (decisions AR6): it reads dirty days live and unsampled,
 * so a range of mostly dirty days (a fresh import, the days migration 0040 marked) is scanned,
 * narrowed and sampled as before.
 */
export const mostlyClean = (dirty: number, fromDay: number, toDay: number) => dirty * 2 < toDay - fromDay + 1;

/** Dirty days of a range (rebuilt rollups are missing or stale for them). */
async function dirtyDays(db: Executor, siteId: string, fromDay: number, toDay: number): Promise<number[]> {
  const rows = await db
    .selectFrom('analytics_days')
    .select('day')
    .where('site_id', '=', siteId)
    .where('dirty', '=', 1)
    .where('day', '>=', fromDay)
    .where('day', '<=', toDay)
    .execute();
  return rows.map((r) => Number(r.day));
}

/** Whole months inside a range with no dirty day: their `analytics_monthly` rows stand for their days. */
function cleanMonths(fromDay: number, toDay: number, dirty: ReadonlySet<number>): Array<{ month: number; first: number; last: number }> {
  const months: Array<{ month: number; first: number; last: number }> = [];
  for (let day = fromDay; day <= toDay; ) {
    const m = monthOf(day);
    if (m.first >= fromDay && m.last <= toDay && ![...dirty].some((d) => d >= m.first && d <= m.last)) months.push(m);
    day = m.last + 1;
  }
  return months;
}

function dayRanges(fromDay: number, toDay: number, skip: (day: number) => boolean): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (let day = fromDay; day <= toDay; day++) {
    if (skip(day)) continue;
    const last = ranges[ranges.length - 1];
    if (last && last[1] === day - 1) last[1] = day;
    else ranges.push([day, day]);
  }
  return ranges;
}

const inRanges = (column: RawBuilder<unknown>, ranges: Array<[number, number]>) =>
  ranges.length
    ? sql`(${sql.join(
        ranges.map(([a, b]) => (a === b ? sql`${column} = ${a}` : sql`${column} between ${a} and ${b}`)),
        sql` or `,
      )})`
    : sql`1 = 0`;

/**
 * The days of ranges as a list: pair rows are keyed by day first (migration 0040), so each day is
 * one seek to its filter value's rows. A pair read's days are those outside whole months (at most
 * ~62) or a day-bucket chart's (at most 93).
 */
export const dayList = (ranges: ReadonlyArray<readonly [number, number]>) =>
  sql`day in (${sql.join(ranges.flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => a + i)))})`;

async function readRollups(db: Executor, spec: ReadSpec, plan: RollupPlan): Promise<SumRow[]> {
  const dirty = new Set(await dirtyDays(db, spec.siteId, spec.fromDay, spec.toDay));
  const months = spec.bucket === 'day' ? [] : cleanMonths(spec.fromDay, spec.toDay, dirty);
  const inMonth = (day: number) => months.some((m) => day >= m.first && day <= m.last);
  const dailyRanges = dayRanges(spec.fromDay, spec.toDay, (day) => dirty.has(day) || inMonth(day));
  const grouped = plan.dim !== 'total' && spec.group !== null;
  const keyCount = spec.group === null ? 0 : plan.paired ? 2 : 1;
  const k = (alias: 'k1' | 'k2', col: 'v1' | 'v2') =>
    keyCount >= (alias === 'k1' ? 1 : 2) ? sql`${sql.ref(col)} as ${sql.raw(alias)}` : sql`0 as ${sql.raw(alias)}`;
  const only = plan.only ? sql` and v1 in ${valueIds(db, spec.siteId, plan.only.dict, plan.only.filter)}` : sql``;
  const known = spec.knownOnly && grouped ? sql` and v1 <> 0` : sql``;
  const sums = sql.join(SUM_COLUMNS.map((c) => sql.ref(c)));
  // A pair plan reads the same rows of its filter value (decisions AR6).
  const { pair } = plan;
  const [monthly, daily] = pair ? [sql`analytics_pair_monthly`, sql`analytics_pair_daily`] : [sql`analytics_monthly`, sql`analytics_daily`];
  const of = pair ? sql`site_id = ${spec.siteId} and fdim = ${pair.fdim} and f1 = ${pair.f1} and f2 = ${pair.f2}` : sql`site_id = ${spec.siteId}`;
  const parts: RawBuilder<unknown>[] = [];
  if (months.length)
    parts.push(sql`select -month as bucket, ${k('k1', 'v1')}, ${k('k2', 'v2')}, ${sums} from ${monthly}
      where ${of} and dim = ${plan.dim} and month in (${sql.join(months.map((m) => m.month))})${only}${known}`);
  if (dailyRanges.length)
    parts.push(sql`select day as bucket, ${k('k1', 'v1')}, ${k('k2', 'v2')}, ${sums} from ${daily}
      where ${of} and dim = ${plan.dim} and ${pair ? dayList(dailyRanges) : inRanges(sql.ref('day'), dailyRanges)}${only}${known}`);
  if (dirty.size) {
    // The live part: the rollup dimension's GROUP BY on the raw rows of the dirty days.
    const liveSpec: ReadSpec = {
      ...spec,
      group:
        plan.dim === 'total'
          ? null
          : plan.dim === 'page'
            ? 'page'
            : ((plan.paired ? [plan.dim, ROLLUP_PAIR[plan.dim as SessionDim]] : [plan.dim]) as SessionDim[]),
      // A pair plan's rows are those of all the filters (its filter and `only`), as a scan reads them.
      filters: pair ? spec.filters : plan.only ? [plan.only.filter] : [],
    };
    const dirtyList = sql`s.day in (${sql.join([...dirty])})`;
    parts.push(sql`select bucket, k1, k2, ${sums} from (${liveSelect(db, liveSpec, dirtyList, 2, null)}) live`);
  }
  if (!parts.length) return [];
  const outerBucket = spec.bucket === 'none' ? sql`0` : sql`bucket`;
  const keySelect = keyCount ? sql`k1, k2` : sql`0 as k1, 0 as k2`;
  const sumsOf = sql.join(SUM_COLUMNS.map((c) => sql`sum(${sql.ref(c)}) as ${sql.ref(c)}`));
  const groupBy = sql.join([...(spec.bucket === 'none' ? [] : [sql`bucket`]), ...(keyCount ? [sql`k1`, sql`k2`] : [])]);
  const groupClause = spec.bucket === 'none' && !keyCount ? sql`` : sql` group by ${groupBy}`;
  const result = await sql<Record<string, unknown>>`select ${outerBucket} as bucket, ${keySelect}, ${sumsOf}
    from (${sql.join(parts, sql` union all `)}) parts${groupClause}`.execute(db);
  const rows = toRows(result.rows, keyCount, 1).filter((r) => r.visits > 0 || r.pageviews > 0 || r.events > 0);
  return merge(rows, spec.bucket);
}

/**
 * Rows a scan reads, known from the rollups (visits; events for pages), which decides sampling.
 * An `is` filter on a session column is read through its index `(site_id, column, sample, day)`
 * (migration 0036), so the scan reads only the sessions of those values: their rollup rows give
 * the count, and the smallest of the filters' counts is the size (decisions AR5). Without such a
 * filter the scan reads every session of the range.
 */
async function scanSize(db: Executor, spec: ReadSpec): Promise<{ size: number; driver: string | null }> {
  const sizeOf = (rows: SumRow[]) => rows.reduce((n, r) => n + (spec.group === 'page' ? r.events : r.visits), 0);
  const whole = { ...spec, filters: [], group: null, bucket: 'none' as const };
  let size = sizeOf(await readRollups(db, whole, { dim: 'total', paired: false }));
  let driver: string | null = null;
  for (const filter of spec.filters) {
    const { column, dict } = FILTER_COLUMN[filter.dim];
    if (filter.op !== 'is' || column === 'path' || !INDEXED_FILTER_COLUMNS.has(column)) continue;
    const rows = sizeOf(await readRollups(db, whole, { dim: column, paired: false, only: { dict, filter } }));
    if (driver === null || rows < size) {
      size = Math.min(size, rows);
      driver = column;
    }
  }
  return { size, driver };
}

async function readScan(db: Executor, spec: ReadSpec): Promise<ReadResult> {
  const { size, driver } = await scanSize(db, spec);
  let k = 1;
  while (size / k > spec.sampleThreshold && k < MAX_SAMPLE_K) k *= 2;
  const sample = k > 1 ? Array.from({ length: MAX_SAMPLE_K / k }, (_, i) => i * k) : null;
  const keyCount = spec.group === null ? 1 : spec.group === 'page' ? 1 : spec.group.length;
  // With a driving filter the range is a condition on its index's rows, not a day-index search.
  const days = driver ? sql`+s.day between ${spec.fromDay} and ${spec.toDay}` : sql`s.day between ${spec.fromDay} and ${spec.toDay}`;
  const live = liveSelect(db, spec, days, Math.max(keyCount, 2), sample, driver);
  // One bucket: the days (visitors are distinct per day) are summed in the statement, not row by row here.
  const keys = keyAliases(Math.max(keyCount, 2));
  const read =
    spec.bucket === 'none'
      ? sql`select 0 as bucket, ${sql.join(keys)}, ${sql.join(SUM_COLUMNS.map((c) => sql`sum(${sql.ref(c)}) as ${sql.ref(c)}`))}
          from (${live}) days group by ${sql.join(keys)}`
      : live;
  const result = await sql<Record<string, unknown>>`${read}`.execute(db);
  const rows = toRows(result.rows, Math.max(keyCount, 1), k).map((r) => (spec.group === null ? { ...r, keys: [] } : r));
  return { rows: merge(rows, spec.bucket), sampleRate: 1 / k };
}

/** The sums of a read from rollups (exact), or null when its filters need a scan. */
export async function readRollupSums(db: Executor, spec: ReadSpec): Promise<SumRow[] | null> {
  const plan = rollupPlan(spec);
  if (!plan || (plan.pair && !mostlyClean((await dirtyDays(db, spec.siteId, spec.fromDay, spec.toDay)).length, spec.fromDay, spec.toDay))) return null;
  const rows = await readRollups(db, spec, plan);
  return spec.group === null ? rows.map((r) => ({ ...r, keys: [] })) : rows;
}

/** The sums a report needs, exact at every moment (decisions A7). */
export async function readSums(db: Executor, spec: ReadSpec): Promise<ReadResult> {
  const rows = await readRollupSums(db, spec);
  return rows ? { rows, sampleRate: 1 } : readScan(db, spec);
}

/** Dictionary values by id, for the keys of report rows. */
export async function valuesOf(db: Executor, siteId: string, ids: Iterable<number>): Promise<Map<number, string>> {
  const list = [...new Set(ids)].filter((id) => id > 0);
  const out = new Map<number, string>();
  for (let i = 0; i < list.length; i += 1000) {
    const rows = await db
      .selectFrom('analytics_values')
      .select(['id', 'value'])
      .where('site_id', '=', siteId)
      .where('id', 'in', list.slice(i, i + 1000))
      .execute();
    for (const r of rows) out.set(Number(r.id), r.value);
  }
  return out;
}

const SESSION_EXPORT_COLUMNS = [
  'id',
  'started_at',
  'last_at',
  'duration_ms',
  'pageviews',
  'events',
  'entry_path',
  'exit_path',
  'bounce',
  'source',
  'referrer',
  'country',
  'city',
  'device',
  'browser',
  'os',
  'screen',
  'language',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'conversions',
] as const;
const EXPORT_CHUNK = 2000;

/**
 * Raw rows of a range for the CSV export, in chunks (keyset on time and id, so a chunk is one
 * short read). Events: by time within `[utcFrom, utcTo)`, with their session's columns, the
 * `path` filter on the event's own path; sessions: by start within the local days.
 */
export async function* exportRows(
  db: Executor,
  spec: {
    siteId: string;
    type: 'events' | 'sessions';
    fromDay: number;
    toDay: number;
    utcFrom: number;
    utcTo: number;
    filters: readonly AnalyticsFilter[];
    max: number;
  },
): AsyncGenerator<Array<Record<string, unknown>>> {
  let after: { at: number; id: number } | null = null;
  let sent = 0;
  const sessionColumns = sql.join(SESSION_EXPORT_COLUMNS.map((c) => sql`s.${sql.ref(c)} as ${sql.ref(`s_${c}`)}`));
  while (sent < spec.max) {
    const limit = Math.min(EXPORT_CHUNK, spec.max - sent);
    const result: { rows: Array<Record<string, unknown>> } =
      spec.type === 'events'
        ? await sql<Record<string, unknown>>`select e.id as id, e.ts as at, e.type, e.path, e.value, e.x, e.y, e.sel, e.target, e.flags, ${sessionColumns}
            from analytics_events e join analytics_sessions s on s.id = e.session_id
            where e.site_id = ${spec.siteId} and e.ts >= ${spec.utcFrom} and e.ts < ${spec.utcTo}
              and ${filterCondition(db, spec.siteId, spec.filters, true)}
              ${after ? sql`and (e.ts > ${after.at} or (e.ts = ${after.at} and e.id > ${after.id}))` : sql``}
            order by e.ts, e.id limit ${limit}`.execute(db)
        : await sql<Record<string, unknown>>`select s.id as id, s.started_at as at, ${sessionColumns}
            from analytics_sessions s
            where s.site_id = ${spec.siteId} and s.day between ${spec.fromDay} and ${spec.toDay}
              and ${filterCondition(db, spec.siteId, spec.filters, false)}
              ${after ? sql`and (s.started_at > ${after.at} or (s.started_at = ${after.at} and s.id > ${after.id}))` : sql``}
            order by s.started_at, s.id limit ${limit}`.execute(db);
    if (!result.rows.length) return;
    sent += result.rows.length;
    const last: Record<string, unknown> = result.rows[result.rows.length - 1]!;
    after = { at: Number(last.at), id: Number(last.id) };
    yield result.rows;
    if (result.rows.length < limit) return;
  }
}
