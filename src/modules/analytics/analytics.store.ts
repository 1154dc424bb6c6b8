import { type Generated, type RawBuilder, sql } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import { prepared } from '../../db/prepared.js';
import type { Db, Executor } from '../../db/types.js';
import { SLICE_MS, timeSlicer } from '../../shared/time-slice.js';
import { type EventType, TYPE_CODE } from './analytics.codes.js';
import { Lru } from './analytics.enrich.js';
import { type RollupStep, rebuildSiteDay, sessionsOfDay } from './analytics.rebuild.js';
import { eventDimInserts } from './analytics.rollup.events.js';
import { prunePairs, rebuildPairs } from './analytics.rollup.pairs.js';
import { localTime, monthOf } from './analytics.time.js';

/**
 * The storage layout of web analytics (design section 3) behind one interface, so a column
 * store can implement it later (design 3.6). The SQL implementation below serves SQLite and
 * PostgreSQL alike; where they differ, `db/dialect.ts` says how.
 */
export { EVENT_TYPES, type EventType, FLAG_DEAD, FLAG_RAGE, TYPE_CODE } from './analytics.codes.js';
/** Events that make a visit interactive (not a bounce, decisions A4); engagement and vitals are not. */
const INTERACTIONS = new Set<EventType>(['click', 'outbound', 'download', 'form_start', 'form_submit', 'goal']);
const CONVERSIONS = new Set<EventType>(['form_submit', 'goal']);
export const SESSION_IDLE_MS = 30 * 60_000;

/** Session columns holding a dictionary id, each rolled up as a dimension of the same name. */
export const SESSION_DIMS = [
  'entry_path',
  'exit_path',
  'source',
  'referrer',
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
] as const;
export type SessionDim = (typeof SESSION_DIMS)[number];
/** The dictionary namespace of each session column (entry and exit pages are paths). */
const DICT_OF: Record<SessionDim, string> = {
  ...(Object.fromEntries(SESSION_DIMS.map((d) => [d, d])) as Record<SessionDim, string>),
  entry_path: 'path',
  exit_path: 'path',
};

/** Session dims rolled up with a second column as v2: a referrer's source, a city's country (the reports list them together). */
export const ROLLUP_PAIR: Partial<Record<SessionDim, SessionDim>> = { referrer: 'source', city: 'country' };

/** What a session is known by when it starts: its entry page and where the visitor came from. */
export type SessionFacts = Record<Exclude<SessionDim, 'entry_path' | 'exit_path'>, string | null>;

export interface StoredEvent {
  ts: number;
  type: EventType;
  /** The pageview's id as sent (linking engagement, clicks and vitals to their pageview). */
  pv: string | null;
  path: string | null;
  /** Engaged ms (engagement), the vital's value (cwv), the goal's or metric's value (import). */
  value: number | null;
  /** Click: page x ÷ document width. */
  x: number | null;
  /** Click: page y in CSS px; engagement: max scroll depth %. */
  y: number | null;
  vw: number | null;
  selector: string | null;
  /** Outbound and download: the url; forms: the form key; goal: its name; cwv: the metric. */
  target: string | null;
  flags: number;
  importKey: string | null;
}

/** One visitor's events of one batch, resolved to a session when written. */
export interface WriteItem {
  siteId: string;
  timezone: string;
  /** The ids an open session is looked up under (today's salt first, then yesterday's); the first starts a new one. */
  visitors: readonly bigint[];
  /** An import's session id: groups events instead of the 30-minute rule. */
  importSession: string | null;
  facts: SessionFacts;
  events: StoredEvent[];
}

export interface AnalyticsStore {
  /**
   * Writes batches in one transaction: dictionary values, new sessions, session updates, events,
   * dirty days; on the event loop in pieces of at most `sliceMs` (SLICE_MS unless given).
   */
  write(items: readonly WriteItem[], sliceMs?: number): Promise<void>;
  /** Import keys of the site already stored, of those given. */
  existingImportKeys(siteId: string, keys: readonly string[]): Promise<Set<string>>;
  /** Rebuilds a site-day's rollups (and its month's) in one transaction; the day stays dirty if it changed meanwhile. */
  rebuild(siteId: string, day: number): Promise<void>;
  /** Dirty days quiet since `quietBefore` (or rebuilt before `staleBefore`), oldest change first. */
  dirtyDays(quietBefore: number, staleBefore: number, limit: number): Promise<Array<{ siteId: string; day: number }>>;
  /** Deletes up to `limit` raw rows of days before `beforeDay` (events, then emptied sessions), never of a dirty day. */
  pruneRaw(siteId: string, beforeDay: number, limit: number): Promise<number>;
  /** Deletes up to `limit` rollup rows of days before `beforeDay` (and months wholly before it). */
  pruneRollups(siteId: string, beforeDay: number, limit: number): Promise<number>;
}

interface AnalyticsValuesTable {
  id: Generated<number>;
  site_id: string;
  dim: string;
  value: string;
}
type SessionsTable = {
  id: Generated<number>;
  site_id: string;
  visitor: bigint;
  sample: number;
  day: number;
  hour: number;
  started_at: number;
  last_at: number;
  duration_ms: number;
  pageviews: number;
  events: number;
  bounce: number;
  conversions: number;
  import_key: string | null;
} & Record<SessionDim, number | null>;
interface EventsTable {
  id: Generated<number>;
  site_id: string;
  session_id: number;
  ts: number;
  type: number;
  pv: number | null;
  path: number | null;
  value: number | null;
  x: number | null;
  y: number | null;
  vw: number | null;
  sel: number | null;
  target: number | null;
  flags: number;
  import_key: string | null;
}
interface RollupColumns {
  site_id: string;
  dim: string;
  v1: number;
  v2: number;
  visitors: number;
  visits: number;
  pageviews: number;
  bounces: number;
  duration_ms: number;
  engaged_ms: number;
  events: number;
  conversions: number;
}
interface DaysTable {
  site_id: string;
  day: number;
  dirty: number;
  changed_at: number;
  built_at: number | null;
}

declare module '../../db/types.js' {
  interface DB {
    analytics_values: AnalyticsValuesTable;
    analytics_sessions: SessionsTable;
    analytics_events: EventsTable;
    analytics_daily: RollupColumns & { day: number };
    analytics_monthly: RollupColumns & { month: number };
    analytics_days: DaysTable;
  }
}

/** A pageview id as a 32-bit integer (FNV-1a): enough to link a pageview's events within its session. */
function pvCode(pv: string | null): number | null {
  if (!pv) return null;
  let h = 0x811c9dc5;
  for (let i = 0; i < pv.length; i++) h = Math.imul(h ^ pv.charCodeAt(i), 0x01000193);
  return h | 0;
}

interface OpenSession {
  id: number;
  visitor: bigint;
  day: number;
  startedAt: number;
  lastAt: number;
}

/** What one write adds to a session. */
interface SessionDelta {
  session: OpenSession;
  lastAt: number;
  pageviews: number;
  events: number;
  interactions: number;
  conversions: number;
  exitPath: number | null;
}

const EVENT_CHUNK = 100;

type EventRow = Omit<EventsTable, 'id'>;
const EVENT_COLUMNS = [
  'site_id',
  'session_id',
  'ts',
  'type',
  'pv',
  'path',
  'value',
  'x',
  'y',
  'vw',
  'sel',
  'target',
  'flags',
  'import_key',
] as const satisfies ReadonlyArray<keyof EventRow>;
/** Rows as one array of values per column: the flat arguments a prepared statement takes. */
type EventColumns = { [K in keyof EventRow]: Array<EventRow[K]> };

/**
 * The events insert, built and compiled once per chunk size and dialect (db/prepared.ts): Kysely
 * took about 0.15 ms to build and compile 100 rows of 14 values, a third of the insert (AN15).
 */
const insertEvents = prepared((db, p: EventColumns) =>
  db.insertInto('analytics_events').values(p.ts.map((_, i) => Object.fromEntries(EVENT_COLUMNS.map((c) => [c, p[c][i]])) as EventRow)),
);

function columnsOf(rows: readonly EventRow[]): EventColumns {
  return Object.fromEntries(EVENT_COLUMNS.map((c) => [c, rows.map((r) => r[c])])) as EventColumns;
}
export class SqlAnalyticsStore implements AnalyticsStore {
  /** Dictionary ids by `site|dim|value`, both ways only as far as writes need. */
  private readonly values = new Lru<string, number>(200_000);
  /** Open sessions by `site|visitor` or `site|i|importSession`: read-through to analytics_sessions. */
  private readonly sessions = new Lru<string, OpenSession>(100_000);

  constructor(private readonly db: Db) {}

  async write(items: readonly WriteItem[], sliceMs = SLICE_MS): Promise<void> {
    if (!items.length) return;
    const learned = new Map<string, number>();
    const opened = new Map<string, OpenSession>();
    // SQLite runs each statement synchronously and cached lookups resolve at once: without turns a
    // 2,000-event flush held every other request for its whole length (20 inserts of 100 rows in
    // one piece). Every loop below takes turns of the heavy lane, a piece at most `sliceMs`, paced
    // as work that holds the writer (decisions AN15, AN17); reads go on through the reader connection.
    const slice = timeSlicer(sliceMs, true);
    await this.db.transaction().execute(async (trx) => {
      const valueId = async (siteId: string, dim: string, value: string | null): Promise<number | null> => {
        if (value === null || value === '') return null;
        const key = `${siteId}|${dim}|${value}`;
        const known = this.values.get(key) ?? learned.get(key);
        if (known !== undefined) return known;
        await trx
          .insertInto('analytics_values')
          .values({ site_id: siteId, dim, value })
          .onConflict((oc) => oc.columns(['site_id', 'dim', 'value']).doNothing())
          .execute();
        const row = await trx
          .selectFrom('analytics_values')
          .select('id')
          .where('site_id', '=', siteId)
          .where('dim', '=', dim)
          .where('value', '=', value)
          .executeTakeFirstOrThrow();
        learned.set(key, Number(row.id));
        return Number(row.id);
      };
      const deltas = new Map<number, SessionDelta>();
      const rows: EventRow[] = [];
      const dirty = new Map<string, { siteId: string; day: number }>();
      for (const item of items) {
        for (const event of item.events) {
          await slice();
          const session = await this.sessionFor(trx, item, event, opened, valueId);
          const path = await valueId(item.siteId, 'path', event.path);
          let delta = deltas.get(session.id);
          if (!delta) {
            delta = { session, lastAt: session.lastAt, pageviews: 0, events: 0, interactions: 0, conversions: 0, exitPath: null };
            deltas.set(session.id, delta);
          }
          delta.lastAt = Math.max(delta.lastAt, event.ts);
          session.lastAt = delta.lastAt;
          delta.events++;
          if (event.type === 'pageview') {
            delta.pageviews++;
            delta.exitPath = path;
          }
          if (INTERACTIONS.has(event.type)) delta.interactions++;
          if (CONVERSIONS.has(event.type)) delta.conversions++;
          dirty.set(`${item.siteId}|${session.day}`, { siteId: item.siteId, day: session.day });
          rows.push({
            site_id: item.siteId,
            session_id: session.id,
            ts: event.ts,
            type: TYPE_CODE[event.type],
            pv: pvCode(event.pv),
            path,
            value: event.value,
            x: event.x,
            y: event.y,
            vw: event.vw,
            sel: await valueId(item.siteId, 'selector', event.selector),
            target: await valueId(
              item.siteId,
              event.type === 'outbound' || event.type === 'download'
                ? 'url'
                : event.type.startsWith('form')
                  ? 'form'
                  : event.type === 'cwv'
                    ? 'metric'
                    : 'goal',
              event.target,
            ),
            flags: event.flags,
            import_key: event.importKey,
          });
        }
      }
      for (let i = 0; i < rows.length; i += EVENT_CHUNK) {
        await slice();
        await insertEvents.execute(trx, columnsOf(rows.slice(i, i + EVENT_CHUNK)));
      }
      const greatest = dialectOf(trx).greatest;
      for (const d of deltas.values()) {
        await slice();
        await trx
          .updateTable('analytics_sessions')
          .set({
            last_at: greatest(sql.ref('last_at'), sql.lit(d.lastAt)),
            duration_ms: sql`${greatest(sql.ref('last_at'), sql.lit(d.lastAt))} - started_at`,
            bounce: sql`case when bounce = 1 and pageviews + ${sql.lit(d.pageviews)} <= 1 and ${sql.lit(d.interactions)} = 0 then 1 else 0 end`,
            pageviews: sql`pageviews + ${sql.lit(d.pageviews)}`,
            events: sql`events + ${sql.lit(d.events)}`,
            conversions: sql`conversions + ${sql.lit(d.conversions)}`,
            ...(d.exitPath !== null ? { exit_path: d.exitPath } : {}),
          })
          .where('id', '=', d.session.id)
          .execute();
      }
      const now = Date.now();
      for (const { siteId, day } of dirty.values()) {
        await slice();
        await trx
          .insertInto('analytics_days')
          .values({ site_id: siteId, day, dirty: 1, changed_at: now, built_at: null })
          .onConflict((oc) => oc.columns(['site_id', 'day']).doUpdateSet({ dirty: 1, changed_at: now }))
          .execute();
      }
    });
    // Only what the committed transaction stored is remembered.
    for (const [key, id] of learned) this.values.set(key, id);
    for (const [key, session] of opened) this.sessions.set(key, session);
  }

  /** The session an event belongs to: the visitor's (or import's) open one, else a new one. */
  private async sessionFor(
    trx: Executor,
    item: WriteItem,
    event: StoredEvent,
    opened: Map<string, OpenSession>,
    valueId: (siteId: string, dim: string, value: string | null) => Promise<number | null>,
  ): Promise<OpenSession> {
    const keys = item.importSession ? [`${item.siteId}|i|${item.importSession}`] : item.visitors.map((v) => `${item.siteId}|${v}`);
    const fits = (s: OpenSession | undefined) =>
      !!s && (item.importSession !== null || (event.ts - s.lastAt <= SESSION_IDLE_MS && event.ts >= s.startedAt - SESSION_IDLE_MS));
    for (const key of keys) {
      const s = opened.get(key) ?? this.sessions.get(key);
      if (fits(s)) {
        opened.set(keys[0]!, s!);
        return s!;
      }
    }
    let query = trx.selectFrom('analytics_sessions').select(['id', 'visitor', 'day', 'started_at', 'last_at']).where('site_id', '=', item.siteId);
    query = item.importSession
      ? query.where('import_key', '=', item.importSession)
      : query
          .where('visitor', 'in', item.visitors as bigint[])
          .where('last_at', '>=', event.ts - SESSION_IDLE_MS)
          .where('started_at', '<=', event.ts + SESSION_IDLE_MS)
          .orderBy('last_at', 'desc');
    const row = await query.limit(1).executeTakeFirst();
    let session: OpenSession;
    if (row) {
      session = { id: Number(row.id), visitor: BigInt(row.visitor), day: Number(row.day), startedAt: Number(row.started_at), lastAt: Number(row.last_at) };
    } else {
      const visitor = item.visitors[0]!;
      const start = localTime(event.ts, item.timezone);
      const dims: Partial<Record<SessionDim, number | null>> = { entry_path: await valueId(item.siteId, 'path', event.path) };
      for (const dim of SESSION_DIMS) if (dim !== 'entry_path' && dim !== 'exit_path') dims[dim] = await valueId(item.siteId, DICT_OF[dim], item.facts[dim]);
      const inserted = await trx
        .insertInto('analytics_sessions')
        .values({
          site_id: item.siteId,
          visitor,
          sample: Number(BigInt.asUintN(6, visitor)),
          day: start.day,
          hour: start.hour,
          started_at: event.ts,
          last_at: event.ts,
          duration_ms: 0,
          pageviews: 0,
          events: 0,
          bounce: 1,
          conversions: 0,
          import_key: item.importSession,
          ...dims,
          exit_path: dims.entry_path ?? null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      session = { id: Number(inserted.id), visitor, day: start.day, startedAt: event.ts, lastAt: event.ts };
    }
    opened.set(keys[0]!, session);
    return session;
  }

  async existingImportKeys(siteId: string, keys: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < keys.length; i += 1000) {
      const rows = await this.db
        .selectFrom('analytics_events')
        .select('import_key')
        .where('site_id', '=', siteId)
        .where('import_key', 'in', keys.slice(i, i + 1000) as string[])
        .execute();
      for (const r of rows) found.add(r.import_key!);
    }
    return found;
  }

  async rebuild(siteId: string, day: number): Promise<void> {
    const startedAt = Date.now();
    await this.db.transaction().execute(async (trx) => {
      await rebuildSiteDay(trx, siteId, day, monthOf(day), ROLLUP_STEPS);
      await rebuildPairs(trx, siteId, day);
      await trx
        .updateTable('analytics_days')
        .set({ dirty: 0, built_at: startedAt })
        .where('site_id', '=', siteId)
        .where('day', '=', day)
        .where('changed_at', '<', startedAt)
        .execute();
    });
  }

  async dirtyDays(quietBefore: number, staleBefore: number, limit: number) {
    const rows = await this.db
      .selectFrom('analytics_days')
      .select(['site_id', 'day'])
      .where('dirty', '=', 1)
      .where((eb) => eb.or([eb('changed_at', '<=', quietBefore), eb('built_at', 'is', null), eb('built_at', '<=', staleBefore)]))
      .orderBy('changed_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ siteId: r.site_id, day: Number(r.day) }));
  }

  /** The first day whose raw rows retention must keep: `beforeDay`, or an earlier dirty day (not rolled up yet). */
  private async keepFrom(siteId: string, beforeDay: number): Promise<number> {
    const row = await this.db
      .selectFrom('analytics_days')
      .select((eb) => eb.fn.min('day').as('day'))
      .where('site_id', '=', siteId)
      .where('dirty', '=', 1)
      .where('day', '<', beforeDay)
      .executeTakeFirst();
    return row?.day === null || row?.day === undefined ? beforeDay : Number(row.day);
  }

  async pruneRaw(siteId: string, beforeDay: number, limit: number): Promise<number> {
    const until = await this.keepFrom(siteId, beforeDay);
    const events = await this.db
      .deleteFrom('analytics_events')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('analytics_events as e')
          .innerJoin('analytics_sessions as s', 's.id', 'e.session_id')
          .select('e.id')
          .where('s.site_id', '=', siteId)
          .where('s.day', '<', until)
          .limit(limit),
      )
      .executeTakeFirst();
    const sessions = await this.db
      .deleteFrom('analytics_sessions')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('analytics_sessions as s')
          .select('s.id')
          .where('s.site_id', '=', siteId)
          .where('s.day', '<', until)
          .where((w) => w.not(w.exists(w.selectFrom('analytics_events as e').select('e.id').whereRef('e.session_id', '=', 's.id'))))
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(events.numDeletedRows) + Number(sessions.numDeletedRows);
  }

  async pruneRollups(siteId: string, beforeDay: number, limit: number): Promise<number> {
    const daily = await sql`delete from analytics_daily where (site_id, dim, day, v1, v2) in (
        select site_id, dim, day, v1, v2 from analytics_daily where site_id = ${siteId} and day < ${beforeDay} limit ${limit})`.execute(this.db);
    const month = monthOf(beforeDay).month;
    const monthly = await sql`delete from analytics_monthly where (site_id, dim, month, v1, v2) in (
        select site_id, dim, month, v1, v2 from analytics_monthly where site_id = ${siteId} and month < ${month} limit ${limit})`.execute(this.db);
    const pairs = await prunePairs(this.db, siteId, beforeDay, limit);
    await this.db.deleteFrom('analytics_days').where('site_id', '=', siteId).where('day', '<', beforeDay).where('dirty', '=', 0).execute();
    return Number(daily.numAffectedRows ?? 0) + Number(monthly.numAffectedRows ?? 0) + pairs;
  }
}

const METRIC_COLUMNS = sql`visitors, visits, pageviews, bounces, duration_ms, engaged_ms, events, conversions`;

/** `analytics_daily` and `analytics_monthly`: total, the session dims, pages and the event dims (AN7, AR1). */
export const dailyRollups: RollupStep = {
  table: 'analytics_daily',
  day(db, siteId, day) {
    const sessions = sql`from ${sessionsOfDay(db)} where site_id = ${siteId} and day = ${day}`;
    // conversions: visits that converted (a campaign's conversion rate is per visit, design 5).
    const metrics = sql`count(distinct visitor), count(*), sum(pageviews), sum(bounce), sum(duration_ms), 0, sum(events), sum(case when conversions > 0 then 1 else 0 end)`;
    const insert = sql`insert into analytics_daily (site_id, day, dim, v1, v2, ${METRIC_COLUMNS})`;
    const statements: RawBuilder<unknown>[] = [
      sql`delete from analytics_daily where site_id = ${siteId} and day = ${day}`,
      sql`${insert} select ${siteId}, ${day}, 'total', 0, 0, ${metrics} ${sessions} having count(*) > 0`,
    ];
    for (const dim of SESSION_DIMS) {
      const col = sql.ref(dim);
      const pair = ROLLUP_PAIR[dim];
      const v2 = pair ? sql.ref(pair) : undefined;
      statements.push(sql`${insert} select ${siteId}, ${day}, ${dim}, coalesce(${col}, 0), ${v2 ? sql`coalesce(${v2}, 0)` : sql`0`}, ${metrics} ${sessions}
          group by ${v2 ? sql`${col}, ${v2}` : col}`);
    }
    // Pages: pageviews, the visitors and visits that viewed each, engaged time on it, bounces of visits entering on it.
    statements.push(sql`${insert}
        select ${siteId}, ${day}, 'page', coalesce(e.path, 0), 0,
          count(distinct case when e.type = ${TYPE_CODE.pageview} then s.visitor end),
          count(distinct case when e.type = ${TYPE_CODE.pageview} then s.id end),
          sum(case when e.type = ${TYPE_CODE.pageview} then 1 else 0 end),
          count(distinct case when s.bounce = 1 and s.entry_path = e.path then s.id end),
          0,
          coalesce(sum(case when e.type = ${TYPE_CODE.engagement} then e.value else 0 end), 0),
          count(*), 0
        from ${sessionsOfDay(db, 's')} join analytics_events e on s.id = e.session_id
        where s.site_id = ${siteId} and s.day = ${day} and e.type in (${TYPE_CODE.pageview}, ${TYPE_CODE.engagement})
        group by e.path`);
    statements.push(...eventDimInserts(siteId, day, sessionsOfDay(db, 's')));
    return statements;
  },
  // Visitors add up across days (design 3.2), so a month is the sum of its days: one statement a dim, each reading that dim's days through the primary key.
  async month(db, siteId, { month, first, last }) {
    const dims = await sql<{ dim: string }>`select distinct dim from analytics_daily where site_id = ${siteId} and day between ${first} and ${last}`.execute(
      db,
    );
    return [
      sql`delete from analytics_monthly where site_id = ${siteId} and month = ${month}`,
      ...dims.rows.map(
        ({ dim }) => sql`insert into analytics_monthly (site_id, month, dim, v1, v2, ${METRIC_COLUMNS})
          select site_id, ${month}, dim, v1, v2, sum(visitors), sum(visits), sum(pageviews), sum(bounces), sum(duration_ms), sum(engaged_ms), sum(events), sum(conversions)
          from analytics_daily where site_id = ${siteId} and dim = ${dim} and day between ${first} and ${last} group by site_id, dim, v1, v2`,
      ),
    ];
  },
};

/** What a site-day's rebuild writes, table by table (decision AN12): a table of rollups reports read is a step here. */
export const ROLLUP_STEPS: readonly RollupStep[] = [dailyRollups];
