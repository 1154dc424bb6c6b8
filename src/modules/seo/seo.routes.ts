import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../shared/errors.js';
import { listQuerySchema } from '../../shared/pagination.js';
import { named, Paginated, ref, SiteKeyQuery } from '../../shared/schemas.js';
import { retentionTask } from '../../jobs/retention.js';
import { deleteOldIndexNowLogs } from './seo.repository.js';
import * as indexNow from './seo.indexnow.js';
import { OutputCache } from './seo.cache.js';
import { llmsRoutes } from './llms.routes.js';
import { sitemapRoutes } from './sitemap.routes.js';
import { sendCacheable } from '../../shared/http-cache.js';
import type { Executor } from '../../db/types.js';
import type { AppModule } from '../types.js';
import { renderRobots } from './seo.robots.js';
import { seoFields } from './seo.resource.js';
import * as service from './seo.service.js';
import { absoluteUrl, loadUrlContext } from './seo.urls.js';
import * as searchIndexing from '../search-console/search-console.indexing.js';

const tags = ['SEO'];
const SeoSettingsRef = ref(named('SeoSettings', seoFields.response()));
const SeoSettingsUpdate = seoFields.updateBody();
const TextFile = { description: 'text/plain', type: 'string' } as const;
/** IndexNow log rows are kept this long. */
const INDEXNOW_LOG_DAYS = 90;
const IndexNowLogRef = ref(
  named(
    'IndexNowLog',
    Type.Object({
      id: Type.Integer(),
      url: Type.String(),
      status: Type.String({ description: '`success` or `failed`' }),
      responseCode: Type.Union([Type.Integer(), Type.Null()]),
      submittedAt: Type.String({ format: 'date-time' }),
    }),
  ),
);
const SubmissionStats = named(
  'SubmissionStats',
  Type.Object({ total: Type.Integer(), success: Type.Integer(), failed: Type.Integer(), lastSubmittedAt: Type.Union([Type.String(), Type.Null()]) }),
);
const IndexNowTest = Type.Object({ status: Type.String(), url: Type.String(), responseCode: Type.Union([Type.Integer(), Type.Null()]) });

async function robotsFor(db: Executor, siteId: string): Promise<string> {
  const [settings, urls] = await Promise.all([service.getSettings(db, siteId), loadUrlContext(db, siteId)]);
  // The front end serves the sitemap at its root (proxying /v1/public/sitemap.xml).
  return renderRobots(settings, absoluteUrl(urls!, '/sitemap.xml'));
}

/**
 * The SEO group (spec "SEO", decisions S2, G18, G20): settings, robots.txt, IndexNow, the
 * sitemap and its entries, rules and sources, llms.txt and markdown. Their outputs share one
 * cache, built once per app.
 */
export const seoModule: AppModule<OutputCache> = {
  name: 'seo',
  init: ({ siteGeneration }) => new OutputCache(siteGeneration),
  jobs(worker, { config }) {
    worker.task('seo.indexnow', indexNow.indexNowTask(config.indexNow));
    worker.task('retention.indexnow_logs', retentionTask(INDEXNOW_LOG_DAYS, deleteOldIndexNowLogs));
  },
  routes(app, deps, outputs) {
    const { db, config } = deps;
    app.get(
      '/seo/settings',
      {
        config: { scope: 'seo.view' },
        schema: { tags, operationId: 'getSeoSettings', summary: 'SEO settings (a bare object)', response: { 200: SeoSettingsRef } },
      },
      async (req) => service.getSettings(db, req.auth.siteId),
    );

    app.put(
      '/seo/settings',
      {
        config: { scope: 'seo.update' },
        schema: {
          tags,
          operationId: 'updateSeoSettings',
          summary: 'Change SEO settings (partial)',
          description: '`indexNowEnabled: true` needs an `indexNowKey` (422 on `indexNowKey`). Changing the key clears `indexNowLastVerifiedAt`.',
          body: SeoSettingsUpdate,
          response: { 200: SeoSettingsRef },
        },
      },
      async (req) => service.updateSettings(db, req.auth.siteId, req.body),
    );

    const robotsDoc =
      'The `robotsRules` groups in order, then the AI crawler group `aiCrawlers` asks for, then `Sitemap: https://<domain>/sitemap.xml` when `robotsSitemapLink`.';
    app.get(
      '/seo/robots.txt',
      {
        config: { scope: 'seo.view' },
        schema: { tags, operationId: 'getRobotsTxt', summary: 'robots.txt as the settings render it', description: robotsDoc, response: { 200: TextFile } },
      },
      async (req: FastifyRequest, reply: FastifyReply) =>
        sendCacheable(req, reply, await outputs.get(req.auth.siteId, 'robots.txt', () => robotsFor(db, req.auth.siteId)), 'text/plain; charset=utf-8', 0),
    );

    app.get(
      '/public/robots.txt',
      {
        config: { scope: 'public', siteKey: true },
        schema: {
          tags,
          operationId: 'getRobotsTxtPublic',
          summary: 'robots.txt with the site key, for the front end to serve at /robots.txt',
          description: `${robotsDoc} With \`ETag\`, \`Cache-Control: public, max-age=300\` and 304.`,
          querystring: SiteKeyQuery,
          response: { 200: TextFile, 304: { description: 'Not modified', type: 'null' } },
        },
      },
      async (req: FastifyRequest, reply: FastifyReply) =>
        sendCacheable(
          req,
          reply,
          await outputs.get(req.publicSite.siteId, 'robots.txt', () => robotsFor(db, req.publicSite.siteId)),
          'text/plain; charset=utf-8',
        ),
    );

    app.get(
      '/seo/indexnow/test',
      {
        config: { scope: 'seo.update' },
        schema: {
          tags,
          operationId: 'testIndexNow',
          summary: "Submit the site's home page to IndexNow now",
          description: '422 on `indexNowKey` without a key. A success sets `indexNowLastVerifiedAt`. The submission is logged like the others.',
          response: { 200: IndexNowTest },
        },
      },
      async (req) => indexNow.testIndexNow(db, config.indexNow, req.auth.siteId),
    );

    app.get(
      '/seo/indexnow/logs',
      {
        config: { scope: 'seo.view' },
        schema: {
          tags,
          operationId: 'listIndexNowLogs',
          summary: 'IndexNow submissions, one row per URL, newest first',
          querystring: listQuerySchema(['submitted_at'], {}),
          response: { 200: Paginated(IndexNowLogRef) },
        },
      },
      async (req) => indexNow.indexNowLogs(db, req.auth.siteId, req.query),
    );

    app.get(
      '/seo/indexnow/stats',
      {
        config: { scope: 'seo.view' },
        schema: { tags, operationId: 'indexNowStats', summary: 'IndexNow submission counts (a bare object)', response: { 200: ref(SubmissionStats) } },
      },
      async (req) => indexNow.indexNowStats(db, req.auth.siteId),
    );

    const indexingDoc =
      'Indexing API notifications sent for published and changed contents (at most `SEARCH_INDEXING_DAILY_QUOTA` a Pacific day) once `searchIndexingEnabled` is on. Google restricts this API to job-posting and live-stream pages. 409 `integration_not_connected` until a search console is connected (decisions A2, SC6).';
    app.get(
      '/seo/search-indexing/logs',
      {
        config: { scope: 'seo.view' },
        schema: {
          tags,
          operationId: 'listSearchIndexingLogs',
          summary: 'Search-console indexing submissions, one row per URL, newest first',
          description: indexingDoc,
          querystring: listQuerySchema(['submitted_at'], {}),
          response: { 200: Paginated(ref(searchIndexing.IndexingLog)), 409: { $ref: 'Error#' } },
        },
      },
      async (req) => searchIndexing.indexingLogs(db, req.auth.siteId, req.query),
    );
    app.get(
      '/seo/search-indexing/stats',
      {
        config: { scope: 'seo.view' },
        schema: {
          tags,
          operationId: 'searchIndexingStats',
          summary: 'Search-console indexing counts (a bare object)',
          description: indexingDoc,
          response: { 200: ref(SubmissionStats), 409: { $ref: 'Error#' } },
        },
      },
      async (req) => searchIndexing.indexingStats(db, req.auth.siteId),
    );

    app.get(
      '/public/indexnow/:key.txt',
      {
        config: { scope: 'public', siteKey: true },
        schema: {
          tags,
          operationId: 'getIndexNowKeyFile',
          summary: 'The IndexNow key file, for the front end to serve at /{key}.txt',
          description:
            "Answers the key as text when it is the site's IndexNow key, else 404. Submissions name `https://{domain}/{key}.txt` as the key location.",
          params: Type.Object({ key: Type.String({ minLength: 8, maxLength: 64 }) }),
          querystring: SiteKeyQuery,
          response: { 200: TextFile, 304: { description: 'Not modified', type: 'null' }, 404: { $ref: 'Error#' } },
        },
      },
      async (req: FastifyRequest<{ Params: { key: string } }>, reply: FastifyReply) => {
        const text = await indexNow.keyFile(db, req.publicSite.siteId, req.params.key);
        if (text === null) throw new AppError('NOT_FOUND', { message: "This is not the site's IndexNow key." });
        return sendCacheable(req, reply, text, 'text/plain; charset=utf-8');
      },
    );
    sitemapRoutes(app, deps, outputs);
    llmsRoutes(app, deps, outputs);
  },
};
