import type { Db } from '../../db/types.js';
import type { WorkerTask } from '../../jobs/worker.js';
import * as repo from './analytics.repository.js';
import { DEFAULTS, retentionBySite } from './analytics.settings.js';
import type { AnalyticsStore } from './analytics.store.js';
import { localTime } from './analytics.time.js';

/** A changed day is rebuilt once quiet this long; today, at most this often while it keeps changing (design 3.3). */
export const REBUILD_QUIET_MS = 60_000;
export const REBUILD_STALE_MS = 5 * 60_000;
const REBUILDS_PER_TICK = 20;
/** Rows per delete statement: short transactions, so the collector's flush never waits long (H26). */
export const ANALYTICS_RETENTION_BATCH = 1000;
const RETENTION_INTERVAL_MS = 3_600_000;

/** Rebuilds the rollups of dirty days; returns how many it rebuilt. */
export async function rebuildDirtyDays(store: AnalyticsStore, now = Date.now(), quietMs = REBUILD_QUIET_MS): Promise<number> {
  const days = await store.dirtyDays(now - quietMs, now - REBUILD_STALE_MS, REBUILDS_PER_TICK);
  for (const { siteId, day } of days) await store.rebuild(siteId, day);
  return days.length;
}

/**
 * One pass of analytics retention (decisions A6): for every site, at most `batch` raw rows
 * (events, then sessions left without events) of days before `rawRetentionDays`, and at most
 * `batch` rollup rows of days before `aggregateRetentionDays`. Returns how many rows went.
 */
export async function pruneAnalytics(db: Db, store: AnalyticsStore, now = Date.now(), batch = ANALYTICS_RETENTION_BATCH): Promise<number> {
  const custom = await retentionBySite(db);
  let deleted = 0;
  for (const site of await repo.listSiteIds(db)) {
    const days = custom.get(site.id) ?? { raw: DEFAULTS.rawRetentionDays, aggregate: DEFAULTS.aggregateRetentionDays };
    const today = localTime(now, site.timezone).day;
    deleted += await store.pruneRaw(site.id, today - days.raw, batch);
    deleted += await store.pruneRollups(site.id, today - days.aggregate, batch);
  }
  return deleted;
}

export function rebuildTask(store: AnalyticsStore): WorkerTask {
  return async () => rebuildDirtyDays(store);
}

/** Retention as a worker task: a backlog drains a batch a tick; once caught up it sleeps an hour. */
export function retentionTask(db: Db, store: AnalyticsStore): WorkerTask {
  let nextRunAt = 0;
  return async ({ log }) => {
    const now = Date.now();
    if (now < nextRunAt) return 0;
    const deleted = await pruneAnalytics(db, store, now);
    nextRunAt = deleted >= ANALYTICS_RETENTION_BATCH ? 0 : now + RETENTION_INTERVAL_MS;
    if (deleted > 0) log.debug({ deleted }, 'analytics retention');
    return 0;
  };
}
