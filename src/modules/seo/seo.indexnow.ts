import type { Executor } from '../../db/types.js';
import type { WorkerTask } from '../../jobs/worker.js';
import { invalid } from '../../shared/errors.js';
import { type ListQuery, paginate, pageMeta } from '../../shared/pagination.js';
import * as repo from './seo.repository.js';
import { publishedChangedSince } from '../contents/content-links.js';
import { getSettings } from './seo.service.js';
import { absoluteUrl, contentPath, loadUrlContext } from './seo.urls.js';

/** URLs per submission: the protocol's limit. */
export const INDEXNOW_BATCH = 10_000;
const TIMEOUT_MS = 10_000;

export interface IndexNowConfig {
  endpoint: string;
  intervalMs: number;
}

interface Submission {
  ok: boolean;
  responseCode: number | null;
  error: string | null;
}

/** One POST of the IndexNow protocol: `{ host, key, keyLocation, urlList }`; 200 and 202 are success. */
async function submit(endpoint: string, domain: string, key: string, urls: readonly string[]): Promise<Submission> {
  try {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Cairn-IndexNow/1' },
      body: JSON.stringify({ host: domain, key, keyLocation: absoluteUrl({ domain }, `/${key}.txt`), urlList: urls }),
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await res.body?.cancel().catch(() => undefined);
    const ok = res.status === 200 || res.status === 202;
    return { ok, responseCode: res.status, error: ok ? null : `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, responseCode: null, error: (err as Error).message.slice(0, 500) };
  }
}

async function log(db: Executor, siteId: string, urls: readonly string[], result: Submission, at: string) {
  await repo.insertIndexNowLogs(
    db,
    urls.map((url) => ({
      site_id: siteId,
      url,
      status: result.ok ? 'success' : 'failed',
      response_code: result.responseCode,
      error: result.error,
      submitted_at: at,
    })),
  );
}

/**
 * The worker task (decisions S12): every `intervalMs`, for each site with IndexNow on, the
 * published contents changed since its watermark (at most INDEXNOW_BATCH, oldest first) are
 * submitted in one request and logged per URL. The watermark is claimed before the request, so
 * two processes never submit the same batch; a failed submission puts it back and is retried at
 * the next run.
 */
export function indexNowTask(config: IndexNowConfig): WorkerTask {
  let nextRunAt = 0;
  return async ({ db, log: logger }) => {
    if (Date.now() < nextRunAt) return 0;
    nextRunAt = Date.now() + config.intervalMs;
    let submitted = 0;
    for (const site of await repo.indexNowSites(db)) {
      const changed = await publishedChangedSince(db, site.site_id, site.index_now_submitted_until, INDEXNOW_BATCH);
      if (!changed.length) continue;
      const until = changed[changed.length - 1]!.updated_at;
      if (!(await repo.claimWatermark(db, site.site_id, site.index_now_submitted_until, until))) continue;
      const urls = await loadUrlContext(db, site.site_id);
      if (!urls) continue;
      const list = [...new Set(changed.map((c) => absoluteUrl(urls, contentPath(urls, { slug: c.slug, locale: c.locale, type: c.type }))))];
      const result = await submit(config.endpoint, urls.domain, site.index_now_key!, list);
      await log(db, site.site_id, list, result, new Date().toISOString());
      if (!result.ok) {
        await repo.claimWatermark(db, site.site_id, until, site.index_now_submitted_until);
        logger.warn({ siteId: site.site_id, responseCode: result.responseCode, error: result.error }, 'IndexNow submission failed; retried later');
      } else submitted += list.length;
    }
    if (submitted) logger.debug({ submitted }, 'IndexNow');
    // No work reported: the interval paces the task, never a tight loop.
    return 0;
  };
}

/** `GET /seo/indexnow/test`: submits the site's home page now; a success marks the key verified. */
export async function testIndexNow(db: Executor, config: IndexNowConfig, siteId: string) {
  const settings = await getSettings(db, siteId);
  if (!settings.indexNowKey) throw invalid('VALIDATION_FAILED', 'indexNowKey', 'Set an IndexNow key (PUT /seo/settings indexNowKey) first.');
  const urls = (await loadUrlContext(db, siteId))!;
  const url = absoluteUrl(urls, '/');
  const result = await submit(config.endpoint, urls.domain, settings.indexNowKey, [url]);
  const at = new Date().toISOString();
  await log(db, siteId, [url], result, at);
  if (result.ok) await repo.markVerified(db, siteId, at);
  return { status: result.ok ? ('success' as const) : ('failed' as const), url, responseCode: result.responseCode };
}

export async function indexNowLogs(db: Executor, siteId: string, query: ListQuery) {
  const { rows, total } = await paginate(repo.indexNowLogs(db, siteId), query, (qb) => qb.orderBy('id', query.sortOrder ?? 'desc'));
  return {
    data: rows.map((r) => ({ id: Number(r.id), url: r.url, status: r.status, responseCode: r.response_code, submittedAt: r.submitted_at })),
    meta: pageMeta(total, query.page, query.limit),
  };
}

export const indexNowStats = (db: Executor, siteId: string) => repo.indexNowStats(db, siteId);

/** The key file's text when `key` is the site's IndexNow key, else null (404). */
export async function keyFile(db: Executor, siteId: string, key: string): Promise<string | null> {
  const settings = await getSettings(db, siteId);
  return settings.indexNowKey && settings.indexNowKey === key ? settings.indexNowKey : null;
}
