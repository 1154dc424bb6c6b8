import type { Db } from '../../db/types.js';
import { AppError, invalid } from '../../shared/errors.js';
import { pageMeta } from '../../shared/pagination.js';
import { requireConnection } from './search-console.connection.js';
import { addDays, addMonths, daysBetween, HISTORY_MONTHS, pacificDay } from './search-console.dates.js';
import * as repo from './search-console.repository.js';

export const PERIODS = ['7d', '28d', '30d', '90d', '3m', '6m', '12m', '16m'] as const;
export type Period = (typeof PERIODS)[number];
/** The console's own default. */
const DEFAULT_PERIOD: Period = '28d';

/**
 * Rebuilds the snapshot of every named period ending at `through` (each key's sums in the period
 * and the one before), so the change lists read one row per key. Readers use the daily rows
 * while it is rebuilt (periods_through is null until it is done).
 */
export async function rebuildSnapshots(db: Db, siteId: string, through: string): Promise<void> {
  await repo.updateConnection(db, siteId, { periods_through: null });
  for (const period of PERIODS) {
    const { current, previous } = resolveWindows({ period }, through)!;
    for (const kind of ['query', 'page'] as const) {
      await repo.rebuildPeriod(db, siteId, period, kind, { prevStart: previous.start, curStart: current.start, curEnd: current.end });
    }
  }
  await repo.updateConnection(db, siteId, { periods_through: through });
}

export interface PeriodQuery {
  period?: Period;
  startDate?: string;
  endDate?: string;
}

export interface ListQuery extends PeriodQuery {
  page: number;
  limit: number;
  minImpressions: number;
}

interface Window {
  start: string;
  end: string;
}

const round = (value: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round((value + Number.EPSILON) * f) / f;
};

/** The numbers of decisions SC3: ctr 4 decimals (0 without impressions), position impression-weighted, 2 decimals (null without). */
function metrics(s: repo.Sums) {
  return {
    clicks: s.clicks,
    impressions: s.impressions,
    ctr: s.impressions ? round(s.clicks / s.impressions, 4) : 0,
    position: s.impressions ? round(s.positionSum / s.impressions, 2) : null,
  };
}

/**
 * The current window: `startDate`/`endDate` (both, start <= end, within the last 16 months), or
 * `period` (default 28d) ending at the last synced day, so every window is whole. The comparison
 * is the same number of days just before it. Null when nothing is synced and no dates were given.
 */
export function resolveWindows(query: PeriodQuery, dataThrough: string | null, now = new Date()): { current: Window; previous: Window } | null {
  let current: Window;
  if (query.startDate !== undefined || query.endDate !== undefined) {
    if (query.startDate === undefined) throw invalid('VALIDATION_FAILED', 'startDate', 'startDate and endDate go together.');
    if (query.endDate === undefined) throw invalid('VALIDATION_FAILED', 'endDate', 'startDate and endDate go together.');
    if (query.startDate > query.endDate) throw invalid('VALIDATION_FAILED', 'startDate', 'startDate must not be after endDate.');
    const earliest = addMonths(pacificDay(now), -HISTORY_MONTHS);
    if (query.startDate < earliest) throw invalid('VALIDATION_FAILED', 'startDate', `Search data goes back 16 months, to ${earliest}.`);
    current = { start: query.startDate, end: query.endDate };
  } else {
    if (!dataThrough) return null;
    const period = query.period ?? DEFAULT_PERIOD;
    const n = Number(period.slice(0, -1));
    const start = period.endsWith('d') ? addDays(dataThrough, 1 - n) : addDays(addMonths(dataThrough, -n), 1);
    current = { start, end: dataThrough };
  }
  const days = daysBetween(current.start, current.end);
  const previousEnd = addDays(current.start, -1);
  return { current, previous: { start: addDays(previousEnd, 1 - days), end: previousEnd } };
}

/**
 * The states of decisions SC4/SC5: no connection is 409; a refused connection with nothing synced
 * is 424 with its error; otherwise the stored rows answer (zeros while the first sync runs).
 */
async function syncedState(db: Db, siteId: string): Promise<{ through: string | null; snapshotCurrent: boolean }> {
  const conn = await requireConnection(db, siteId);
  const { through } = await repo.dataRange(db, siteId);
  if (!through && conn.status === 'error') {
    throw new AppError('integration_failed', { message: `The search console refused the credentials and nothing is synced: ${conn.last_error}` });
  }
  return { through, snapshotCurrent: through !== null && conn.periods_through === through };
}

const dataThrough = async (db: Db, siteId: string) => (await syncedState(db, siteId)).through;

export async function overview(db: Db, siteId: string, query: PeriodQuery) {
  const through = await dataThrough(db, siteId);
  const windows = resolveWindows(query, through);
  const empty = { clicks: 0, impressions: 0, positionSum: 0 };
  const [cur, prev] = windows
    ? await Promise.all([
        repo.totals(db, siteId, windows.current.start, windows.current.end),
        repo.totals(db, siteId, windows.previous.start, windows.previous.end),
      ])
    : [empty, empty];
  return {
    data: {
      ...metrics(cur),
      comparison: { ...metrics(prev), startDate: windows?.previous.start ?? null, endDate: windows?.previous.end ?? null },
      startDate: windows?.current.start ?? null,
      endDate: windows?.current.end ?? null,
      dataThrough: through,
    },
  };
}

/**
 * Growing (clicks up) or falling (clicks down) queries or pages, current period against the one
 * before (decisions SC3): clicksChange, its percent of the previous clicks (null when those were
 * 0; -100 for a key with no clicks now), ordered by the change, ties by clicks then key.
 */
export async function changes(db: Db, siteId: string, kind: repo.SearchKind, direction: 'up' | 'down', query: ListQuery) {
  const { through, snapshotCurrent } = await syncedState(db, siteId);
  const windows = resolveWindows(query, through);
  if (!windows) return { data: [], meta: pageMeta(0, query.page, query.limit) };
  const named = query.startDate === undefined && query.endDate === undefined;
  const params = {
    period: named && snapshotCurrent ? (query.period ?? DEFAULT_PERIOD) : null,
    kind,
    direction,
    prevStart: windows.previous.start,
    curStart: windows.current.start,
    curEnd: windows.current.end,
    minImpressions: query.minImpressions,
    limit: query.limit,
    offset: (query.page - 1) * query.limit,
  };
  const rows = await repo.changedKeys(db, siteId, params);
  const total = rows.length ? Number(rows[0]!.total) : query.page > 1 ? await repo.countChangedKeys(db, siteId, params) : 0;
  return {
    data: rows.map((r) => {
      const prevClicks = Number(r.prev_clicks);
      const change = Number(r.change);
      return {
        [kind]: r.key,
        ...metrics({ clicks: Number(r.clicks), impressions: Number(r.impressions), positionSum: Number(r.position_sum) }),
        clicksChange: change,
        clicksChangePercent: prevClicks > 0 ? round((100 * change) / prevClicks, 1) : null,
      };
    }),
    meta: pageMeta(total, query.page, query.limit),
  };
}

/** How many published contents and page blocks link to each target (decisions SC4): links are current state, `period` only validated. */
export async function links(db: Db, siteId: string, query: PeriodQuery) {
  const through = await dataThrough(db, siteId);
  resolveWindows(query, through);
  const [externalLinks, internalLinks] = await Promise.all([repo.topLinks(db, siteId, false, 100), repo.topLinks(db, siteId, true, 100)]);
  return { data: { externalLinks, internalLinks } };
}
