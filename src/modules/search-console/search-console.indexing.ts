import { Type } from 'typebox';
import type { Config } from '../../config.js';
import type { Db } from '../../db/types.js';
import type { WorkerTask } from '../../jobs/worker.js';
import { type ListQuery, paginate, pageMeta } from '../../shared/pagination.js';
import { Nullable, named } from '../../shared/schemas.js';
import type { SecretBox } from '../../shared/secrets.js';
import { publishedChangedSince } from '../contents/content-links.js';
import { getSettings } from '../seo/seo.service.js';
import { absoluteUrl, contentPath, loadUrlContext } from '../seo/seo.urls.js';
import { requireConnection } from './search-console.connection.js';
import { pacificDay, pacificDayStart } from './search-console.dates.js';
import { type Credentials, GoogleRefused, GoogleUnavailable, INDEXING_SCOPE, accessToken, publishUrl } from './search-console.google.js';
import * as repo from './search-console.repository.js';

export const IndexingLog = named(
  'SearchIndexingLog',
  Type.Object({
    id: Type.Integer(),
    url: Type.String(),
    type: Type.String({ description: '`URL_UPDATED` or `URL_DELETED`' }),
    status: Type.String({ description: '`success` or `failed`' }),
    error: Nullable(Type.String()),
    submittedAt: Type.String({ format: 'date-time' }),
  }),
);

/** GET /seo/search-indexing/logs (decisions SC6): 409 before a connection, then the log, newest first. */
export async function indexingLogs(db: Db, siteId: string, query: ListQuery) {
  await requireConnection(db, siteId);
  const { rows, total } = await paginate(repo.indexingLogs(db, siteId), query, (qb) => qb.orderBy('id', query.sortOrder ?? 'desc'));
  return {
    data: rows.map((r) => ({
      id: Number(r.id),
      url: r.url,
      type: r.type,
      status: r.status,
      error: r.error,
      submittedAt: new Date(r.submitted_at).toISOString(),
    })),
    meta: pageMeta(total, query.page, query.limit),
  };
}

export async function indexingStats(db: Db, siteId: string) {
  await requireConnection(db, siteId);
  return repo.indexingStats(db, siteId);
}

export interface IndexingDeps {
  secrets: SecretBox;
  config: Config['searchConsole'];
  intervalMs: number;
}

/**
 * The Indexing API worker task (decisions SC6), modelled on IndexNow: for each connected site
 * with `searchIndexingEnabled`, the contents published or changed since its watermark get a
 * `URL_UPDATED` notification each, at most the daily quota per Pacific day (the rest wait for the
 * next day), each logged. A 429 or 5xx stops the site's run and leaves the watermark before the
 * URL, so it is sent again later.
 */
export function indexingTask(deps: IndexingDeps): WorkerTask {
  let nextRunAt = 0;
  return async ({ db, log }) => {
    if (Date.now() < nextRunAt) return 0;
    nextRunAt = Date.now() + deps.intervalMs;
    for (const conn of await repo.workingConnections(db)) {
      if (!(await getSettings(db, conn.site_id)).searchIndexingEnabled) continue;
      const quotaLeft = deps.config.indexingDailyQuota - (await repo.submittedSince(db, conn.site_id, pacificDayStart(pacificDay(new Date()))));
      if (quotaLeft <= 0) continue;
      const changed = await publishedChangedSince(db, conn.site_id, conn.indexing_submitted_until, quotaLeft);
      if (!changed.length) continue;
      const urls = (await loadUrlContext(db, conn.site_id))!;
      const credentials = JSON.parse(deps.secrets.decrypt(conn.credentials)) as Credentials;
      let until = conn.indexing_submitted_until;
      for (const c of changed) {
        const url = absoluteUrl(urls, contentPath(urls, { slug: c.slug, locale: c.locale, type: c.type }));
        let error: string | null = null;
        let busy = false;
        try {
          await publishUrl(deps.config, await accessToken(deps.config, credentials, INDEXING_SCOPE), url, 'URL_UPDATED');
        } catch (err) {
          if (!(err instanceof GoogleRefused || err instanceof GoogleUnavailable)) throw err;
          error = err.message;
          busy = err instanceof GoogleUnavailable;
        }
        const at = new Date().toISOString();
        await repo.insertIndexingLog(db, { site_id: conn.site_id, url, type: 'URL_UPDATED', status: error ? 'failed' : 'success', error, submitted_at: at });
        // Busy or failing: this URL and the rest go again at the next run. A refusal is final for the URL.
        if (busy) {
          log.warn({ siteId: conn.site_id, error }, 'search indexing paused until the next run');
          break;
        }
        until = new Date(c.updated_at).toISOString();
      }
      await repo.updateConnection(db, conn.site_id, { indexing_submitted_until: until });
    }
    return 0;
  };
}
