import type { Db } from '../../db/types.js';
import type { JobHandler, WorkerTask } from '../../jobs/worker.js';
import type { Config } from '../../config.js';
import type { SecretBox } from '../../shared/secrets.js';
import { queueSync } from './search-console.connection.js';
import { rebuildSnapshots } from './search-console.reports.js';
import { addDays, addMonths, HISTORY_MONTHS, laterDay, pacificDay } from './search-console.dates.js';
import {
  type AnalyticsRow,
  type Credentials,
  forgetTokens,
  GoogleRefused,
  GoogleUnavailable,
  accessToken,
  queryAll,
  READ_SCOPE,
} from './search-console.google.js';
import * as repo from './search-console.repository.js';

/** Final data settles late: each run fetches the last days it stored again. */
export const REFETCH_DAYS = 3;
/** Days of history a run backfills, newest first. */
export const BACKFILL_CHUNK_DAYS = 30;

export interface SyncDeps {
  db: Db;
  secrets: SecretBox;
  config: Config['searchConsole'];
}

/** One request at most every 1/rps seconds, across the whole run. */
function pacer(requestsPerSecond: number) {
  const gap = 1000 / requestsPerSecond;
  let next = 0;
  return async () => {
    const wait = next - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    next = Math.max(Date.now(), next) + gap;
  };
}

const metrics = (r: AnalyticsRow) => ({ clicks: r.clicks, impressions: r.impressions, position: r.position });

/**
 * Syncs one date range: the `date` dimension says which days have final data (and their true
 * totals, anonymised queries included); then, newest first, each such day's query and page rows,
 * every page of them, replaced in one transaction per day.
 */
async function syncRange(deps: SyncDeps, siteId: string, source: { token: string; property: string; pace: () => Promise<void> }, from: string, to: string) {
  if (from > to) return;
  const read = (dimension: 'date' | 'query' | 'page', startDate: string, endDate: string) =>
    queryAll(deps.config, source.token, source.property, { startDate, endDate, dimension }, { maxRows: deps.config.maxRowsPerDay, pace: source.pace });
  const days = (await read('date', from, to)).sort((a, b) => (a.keys[0]! < b.keys[0]! ? 1 : -1));
  for (const total of days) {
    const date = total.keys[0]!;
    const [queries, pages] = [await read('query', date, date), await read('page', date, date)];
    const day: repo.SyncedDay = {
      date,
      totals: metrics(total),
      rows: {
        query: queries.map((r) => ({ key: r.keys[0]!, ...metrics(r) })),
        page: pages.map((r) => ({ key: r.keys[0]!, ...metrics(r) })),
      },
    };
    await deps.db.transaction().execute((tx) => repo.replaceDay(tx, siteId, day));
  }
}

/**
 * One sync run of a site (decisions SC2): the days after the last one stored (and the last
 * REFETCH_DAYS again) up to yesterday, Pacific time, then the next BACKFILL_CHUNK_DAYS of history
 * back to 16 months ago. While history remains, the next run is due at once; then every interval.
 * A refusal (401/403, invalid_grant) marks the connection `error` and stops syncing until a new
 * PUT; 429, 5xx and network failures are thrown for the worker's backoff (Retry-After honoured).
 */
export async function syncSite(deps: SyncDeps, siteId: string, now = new Date()): Promise<void> {
  const conn = await repo.findConnection(deps.db, siteId);
  if (!conn || conn.status === 'error') return;
  const credentials = JSON.parse(deps.secrets.decrypt(conn.credentials)) as Credentials;
  const today = pacificDay(now);
  const earliest = addMonths(today, -HISTORY_MONTHS);
  const yesterday = addDays(today, -1);
  try {
    const token = await accessToken(deps.config, credentials, READ_SCOPE);
    const source = { token, property: conn.property_url, pace: pacer(deps.config.requestsPerSecond) };
    const { through } = await repo.dataRange(deps.db, siteId);
    const recentFrom = through ? addDays(through, -REFETCH_DAYS) : addDays(today, -BACKFILL_CHUNK_DAYS);
    const recentStart = laterDay(recentFrom, earliest);
    await syncRange(deps, siteId, source, recentStart, yesterday);
    let backfilledFrom = conn.backfilled_from && conn.backfilled_from < recentStart ? conn.backfilled_from : recentStart;
    await repo.updateConnection(deps.db, siteId, { backfilled_from: backfilledFrom });
    if (backfilledFrom > earliest) {
      const chunkFrom = addDays(backfilledFrom, -BACKFILL_CHUNK_DAYS);
      const from = laterDay(chunkFrom, earliest);
      await syncRange(deps, siteId, source, from, addDays(backfilledFrom, -1));
      backfilledFrom = from;
    }
    const stored = (await repo.dataRange(deps.db, siteId)).through;
    if (stored) await rebuildSnapshots(deps.db, siteId, stored);
    const more = backfilledFrom > earliest;
    await repo.updateConnection(deps.db, siteId, {
      status: 'ok',
      last_error: null,
      last_sync_at: now.toISOString(),
      backfilled_from: backfilledFrom,
      next_sync_at: new Date(now.getTime() + (more ? 0 : deps.config.syncIntervalMs)).toISOString(),
    });
  } catch (err) {
    if (err instanceof GoogleRefused) {
      forgetTokens(credentials);
      await repo.updateConnection(deps.db, siteId, { status: 'error', last_error: err.message, next_sync_at: null });
      return;
    }
    if (err instanceof GoogleUnavailable) {
      // The job retries with backoff; should it give up, the scheduler queues it again after the interval.
      await repo.updateConnection(deps.db, siteId, {
        last_error: err.message,
        next_sync_at: new Date(now.getTime() + deps.config.syncIntervalMs).toISOString(),
      });
    }
    throw err;
  }
}

export const syncHandler =
  (deps: SyncDeps): JobHandler =>
  (_ctx, job) =>
    syncSite(deps, job.siteId);

/** Queues the sync of every connection whose next run is due (claimed, so each is queued once). */
export function scheduleTask(): WorkerTask {
  return async ({ db }) => {
    const now = new Date().toISOString();
    const due = await repo.claimDueConnections(db, now);
    for (const siteId of due) await queueSync(db, siteId, now);
    return due.length;
  };
}
