import { type RawBuilder, sql } from 'kysely';
import type { DB, Executor } from '../../db/types.js';
import { TYPE_CODE } from './analytics.codes.js';
import { CWV_METRICS, type EventDim, eventDimSelect, METRICS, PAIRED_EVENT_DIMS, type RowScope } from './analytics.rollup.events.js';
import type { AnalyticsFilter } from './analytics.query.js';
import { dayList, mostlyClean, type PairKey, readRollupSums } from './analytics.sql.js';
import { dialectOf } from '../../db/dialect.js';
import { monthOf } from './analytics.time.js';

/**
 * The SQL of the event reports (realtime, engagement, forms, vitals, sessions, heatmaps): rollup
 * reads exact at every moment (design 3.4) and the raw reads of the R endpoints. Both dialects
 * run the same text; counts come back as numbers.
 */
/** A rollup row without its site and day: the summed metrics of a dim's value pair. */
export type DimRow = Omit<DB['analytics_daily'], 'site_id' | 'day'>;

const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));
const toDimRow = (r: Record<string, unknown>): DimRow => ({
  dim: String(r.dim),
  v1: num(r.v1),
  v2: num(r.v2),
  ...(Object.fromEntries(METRICS.map((m) => [m, num(r[m])])) as Record<(typeof METRICS)[number], number>),
});
const SUMS = sql.join(METRICS.map((m) => sql`sum(${sql.ref(m)}) as ${sql.ref(m)}`));
const COLS = sql.join(METRICS.map((m) => sql.ref(m)));

/** Where rows are read from: a site's local days, optionally narrowed by conditions on sessions `s` and events `e` (filters). */
export interface DimRange {
  siteId: string;
  fromDay: number;
  toDay: number;
  /** The filters as a condition on `s` (and `e` for event dims): set, the range is scanned live (rollups hold no filtered rows). */
  filter?: RawBuilder<unknown>;
  /** With a filter: the sessions' `from` (through a filter column's index) and their day column (`narrowedRead`, decisions AR5). */
  sessions?: RawBuilder<unknown>;
  dayColumn?: RawBuilder<unknown>;
  /** With a filter a pair rollup stands for (decisions AR6): its rows answer the finished days of `PAIRED_EVENT_DIMS`. */
  pair?: PairKey;
  /** The filters as parsed, for counts from rollups (the sessions list). */
  filters?: readonly AnalyticsFilter[];
}

async function dirtyDaysOf(db: Executor, siteId: string, fromDay: number, toDay: number): Promise<number[]> {
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

/**
 * The summed rows of event dims over a range (v1/v2 as keys; `v1` narrows to one value when
 * given). Unfiltered: whole clean months from `analytics_monthly`, other clean days from
 * `analytics_daily`, dirty days live through the rebuild's own SELECT, in one statement.
 * Filtered by a pair rollup's filter (decisions AR6): the same from `analytics_pair_*`, dirty
 * days live with the filter. Otherwise filtered: the same SELECT live over the whole range.
 */
export async function readEventDims(db: Executor, range: DimRange, dims: readonly EventDim[], v1?: number): Promise<DimRow[]> {
  const { siteId, fromDay, toDay } = range;
  const names = (rows: RawBuilder<unknown>) => sql`select dim, v1, v2, ${COLS} from (${rows}) x`;
  const live = (days: RawBuilder<unknown>, narrowed: boolean) =>
    dims.map((dim) =>
      names(
        eventDimSelect(dim, { siteId, days, filter: range.filter, ...(narrowed && range.sessions ? { sessions: range.sessions } : {}) } satisfies RowScope),
      ),
    );
  const parts: RawBuilder<unknown>[] = [];
  const dirty = await dirtyDaysOf(db, siteId, fromDay, toDay);
  const pairable = range.filter && range.pair && dims.every((d) => PAIRED_EVENT_DIMS.includes(d)) && mostlyClean(dirty.length, fromDay, toDay);
  const pair = pairable ? range.pair : undefined;
  if (range.filter && !pair) {
    parts.push(...live(sql`${range.dayColumn ?? sql`s.day`} between ${fromDay} and ${toDay}`, true));
  } else {
    const dirtySet = new Set(dirty);
    const months: number[] = [];
    const dayRanges: Array<[number, number]> = [];
    for (let first = monthOf(fromDay).first; first <= toDay; first = monthOf(first).last + 1) {
      const m = monthOf(first);
      const whole = m.first >= fromDay && m.last <= toDay;
      if (whole && !dirty.some((d) => d >= m.first && d <= m.last)) months.push(m.month);
      else dayRanges.push([Math.max(m.first, fromDay), Math.min(m.last, toDay)]);
    }
    const dimNames = dims.flatMap((d) => (d === 'cwv' ? CWV_METRICS.map((m) => `cwv_${m}`) : [d]));
    const pairCond = (alias: string) =>
      pair ? sql` and ${sql.ref(`${alias}.fdim`)} = ${pair.fdim} and ${sql.ref(`${alias}.f1`)} = ${pair.f1} and ${sql.ref(`${alias}.f2`)} = ${pair.f2}` : sql``;
    const dimCond = (alias: string) => sql`${sql.ref(`${alias}.dim`)} in (${sql.join(dimNames)})${pairCond(alias)}`;
    const [monthly, daily] = pair ? [sql`analytics_pair_monthly`, sql`analytics_pair_daily`] : [sql`analytics_monthly`, sql`analytics_daily`];
    const v1Cond = (alias: string) => (v1 === undefined ? sql`` : sql` and ${sql.ref(`${alias}.v1`)} = ${v1}`);
    if (months.length)
      parts.push(
        sql`select dim, v1, v2, ${COLS} from ${monthly} r where r.site_id = ${siteId} and ${dimCond('r')}${v1Cond('r')} and r.month in (${sql.join(months)})`,
      );
    if (dayRanges.length) {
      const inRanges = sql.join(
        dayRanges.map(([a, b]) => sql`r.day between ${a} and ${b}`),
        sql` or `,
      );
      const notDirty = dirty.length ? sql` and r.day not in (${sql.join(dirty)})` : sql``;
      const days = pair ? dayList(dayRanges.map(([a, b]) => [a, b] as const)) : sql`(${inRanges})`;
      parts.push(sql`select dim, v1, v2, ${COLS} from ${daily} r where r.site_id = ${siteId} and ${dimCond('r')}${v1Cond('r')} and ${days}${notDirty}`);
    }
    if (dirtySet.size) parts.push(...live(sql`s.day in (${sql.join(dirty)})`, false));
  }
  // A raw report's range can lie wholly before raw retention (its start moved past its end): nothing to read.
  if (!parts.length) return [];
  const union = sql.join(parts, sql` union all `);
  const { rows } = await sql<Record<string, unknown>>`select dim, v1, v2, ${SUMS} from (${union}) u
    ${v1 === undefined ? sql`` : sql`where v1 = ${v1}`} group by dim, v1, v2`.execute(db);
  return rows.map(toDimRow);
}

/** The id of one dictionary value, or undefined when the site never stored it. */
export async function valueId(db: Executor, siteId: string, dim: string, value: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('analytics_values')
    .select('id')
    .where('site_id', '=', siteId)
    .where('dim', '=', dim)
    .where('value', '=', value)
    .executeTakeFirst();
  return row ? Number(row.id) : undefined;
}

/** Realtime: the sessions with an event in [since, until], each with its visitor and latest pageview's path. */
export async function activeSessions(db: Executor, siteId: string, since: number, until: number) {
  const { rows } = await sql<{ visitor: unknown; exit_path: unknown; last_at: unknown }>`
    select s.visitor, s.exit_path, s.last_at from analytics_sessions s
    where s.site_id = ${siteId} and s.id in (select e.session_id from analytics_events e where e.site_id = ${siteId} and e.ts >= ${since} and e.ts <= ${until})`.execute(
    db,
  );
  return rows.map((r) => ({ visitor: String(r.visitor), exitPath: num(r.exit_path), lastAt: num(r.last_at) }));
}

/** Pageviews per minute (epoch minute → count) in [from, until). */
export async function pageviewsByMinute(db: Executor, siteId: string, from: number, until: number): Promise<Map<number, number>> {
  const { rows } = await sql<{ minute: unknown; pageviews: unknown }>`
    select e.ts / 60000 as minute, count(*) as pageviews from analytics_events e
    where e.site_id = ${siteId} and e.ts >= ${from} and e.ts < ${until} and e.type = ${TYPE_CODE.pageview}
    group by e.ts / 60000`.execute(db);
  return new Map(rows.map((r) => [num(r.minute), num(r.pageviews)]));
}

/** The session columns a report shows, as stored (dictionary ids). */
const SESSION_COLUMNS = [
  'id',
  'started_at',
  'last_at',
  'duration_ms',
  'pageviews',
  'events',
  'bounce',
  'conversions',
  'entry_path',
  'exit_path',
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
] as const;
export type SessionRow = Record<(typeof SESSION_COLUMNS)[number], number>;
const toSessionRow = (r: Record<string, unknown>) => Object.fromEntries(SESSION_COLUMNS.map((c) => [c, num(r[c])])) as SessionRow;
const sessionCols = sql.join(SESSION_COLUMNS.map((c) => sql.ref(`s.${c}`)));

export const SESSION_SORT = { startedAt: 'started_at', duration: 'duration_ms', pageviews: 'pageviews' } as const;

/** Sessions the newest-first walk may read for one page before a scan of the range is cheaper. */
const WALK_MAX_ROWS = 50_000;
const DAY_MS = 86_400_000;

/**
 * A page of a range's sessions (newest first by default) and their total (decisions AR7). The
 * total comes from the rollups when they answer the filters (exact, A7), else from a count.
 * Newest (or oldest) first, the page walks `(site_id, started_at)` and stops after it, instead of
 * sorting the range, when the rollups tell that it meets its rows soon enough: the walk reads
 * about (offset + limit) × sessions ÷ matching sessions rows. A session's local day starts within
 * a day of its UTC day, so the walk is bounded to the range's UTC days ± 1.
 */
export async function listSessions(
  db: Executor,
  range: DimRange,
  page: { offset: number; limit: number; sort: keyof typeof SESSION_SORT; order: 'asc' | 'desc' },
): Promise<{ rows: SessionRow[]; total: number }> {
  const spec = { siteId: range.siteId, fromDay: range.fromDay, toDay: range.toDay, group: null, bucket: 'none' as const, sampleThreshold: 0 };
  const filtered = range.filters?.length ? await readRollupSums(db, { ...spec, filters: range.filters }) : null;
  const all = range.filter && !filtered ? null : await readRollupSums(db, { ...spec, filters: [] });
  const counted = range.filter ? (filtered && range.filters?.length ? (filtered[0]?.visits ?? 0) : null) : (all?.[0]?.visits ?? 0);
  const walk = page.sort === 'startedAt' && counted !== null && (page.offset + page.limit) * (all?.[0]?.visits ?? 0) <= WALK_MAX_ROWS * Math.max(counted, 1);
  const filter = range.filter ? sql` and ${range.filter}` : sql``;
  const where = walk
    ? sql`s.site_id = ${range.siteId} and s.started_at >= ${(range.fromDay - 1) * DAY_MS} and s.started_at < ${(range.toDay + 2) * DAY_MS}
        and +s.day between ${range.fromDay} and ${range.toDay}${filter}`
    : sql`s.site_id = ${range.siteId} and s.day between ${range.fromDay} and ${range.toDay}${filter}`;
  const from = walk ? sql`analytics_sessions s ${dialectOf(db).indexedBy('analytics_sessions_started_idx')}` : sql`analytics_sessions s`;
  const order = sql.raw(page.order);
  const [list, count] = await Promise.all([
    sql<Record<string, unknown>>`select ${sessionCols} from ${from} where ${where}
      order by ${sql.ref(`s.${SESSION_SORT[page.sort]}`)} ${order}, s.id ${order} limit ${page.limit} offset ${page.offset}`.execute(db),
    counted !== null
      ? Promise.resolve(counted)
      : sql<{ n: unknown }>`select count(*) as n from analytics_sessions s where ${where}`.execute(db).then((r) => num(r.rows[0]?.n)),
  ]);
  return { rows: list.rows.map(toSessionRow), total: count };
}

/** One session of the site from `fromDay` on (older ones are past raw retention), or undefined. */
export async function findSession(db: Executor, siteId: string, id: number, fromDay: number): Promise<SessionRow | undefined> {
  const { rows } = await sql<Record<string, unknown>>`select ${sessionCols} from analytics_sessions s
    where s.id = ${id} and s.site_id = ${siteId} and s.day >= ${fromDay}`.execute(db);
  return rows[0] ? toSessionRow(rows[0]) : undefined;
}

export interface TimelineEvent {
  ts: number;
  type: number;
  path: number;
  value: number | null;
  x: number | null;
  y: number | null;
  sel: number;
  target: number;
  flags: number;
}

export async function sessionEvents(db: Executor, siteId: string, sessionId: number): Promise<TimelineEvent[]> {
  const rows = await db
    .selectFrom('analytics_events')
    .select(['ts', 'type', 'path', 'value', 'x', 'y', 'sel', 'target', 'flags'])
    .where('session_id', '=', sessionId)
    .where('site_id', '=', siteId)
    .orderBy('ts')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    ts: num(r.ts),
    type: num(r.type),
    path: num(r.path),
    value: r.value === null ? null : Number(r.value),
    x: r.x === null ? null : Number(r.x),
    y: r.y === null ? null : Number(r.y),
    sel: num(r.sel),
    target: num(r.target),
    flags: num(r.flags),
  }));
}

/**
 * The clicks of one page over a range: the densest grid points (x on 0.01, y on 10 px) and the
 * clicked elements. The page's clicks drive the read (the partial index of migration 0041,
 * decisions AR7), from the range's first UTC day − 1 on (a session's clicks come after its
 * start); their sessions give the local day and the filters.
 */
export async function clickHeatmap(db: Executor, range: DimRange, pathId: number, maxPoints: number, maxElements: number) {
  const clicks = sql`from analytics_events e ${dialectOf(db).indexedBy('analytics_events_clicks_idx')} join analytics_sessions s on s.id = e.session_id
    where e.site_id = ${range.siteId} and e.path = ${pathId} and e.type = ${sql.lit(TYPE_CODE.click)} and e.ts >= ${(range.fromDay - 1) * DAY_MS}
      and s.site_id = ${range.siteId} and +s.day between ${range.fromDay} and ${range.toDay}
    ${range.filter ? sql` and ${range.filter}` : sql``}`;
  const gx = sql`cast(floor(e.x * 100 + 0.5) as integer)`;
  const gy = sql`cast(floor(e.y / 10.0 + 0.5) as integer)`;
  const [points, elements] = await Promise.all([
    sql<{ gx: unknown; gy: unknown; n: unknown }>`select ${gx} as gx, ${gy} as gy, count(*) as n ${clicks} and e.x is not null and e.y is not null
      group by ${gx}, ${gy} order by n desc, gx, gy limit ${maxPoints}`.execute(db),
    sql<{ sel: unknown; n: unknown; rage: unknown; dead: unknown }>`select coalesce(e.sel, 0) as sel, count(*) as n,
      sum(case when (e.flags & 1) <> 0 then 1 else 0 end) as rage, sum(case when (e.flags & 2) <> 0 then 1 else 0 end) as dead
      ${clicks} group by e.sel order by n desc, sel limit ${maxElements}`.execute(db),
  ]);
  const total = await sql<{ n: unknown }>`select count(*) as n ${clicks}`.execute(db);
  return {
    clicks: num(total.rows[0]?.n),
    points: points.rows.map((r) => ({ gx: num(r.gx), gy: num(r.gy), count: num(r.n) })),
    elements: elements.rows.map((r) => ({ sel: num(r.sel), clicks: num(r.n), rage: num(r.rage), dead: num(r.dead) })),
  };
}
