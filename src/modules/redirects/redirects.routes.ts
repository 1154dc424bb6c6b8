import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { retentionTask } from '../../jobs/retention.js';
import { MULTIPART_ERRORS } from '../../shared/multipart.js';
import { ImportResultRef, importBody } from '../../kit/import.js';
import { listQuerySchema } from '../../shared/pagination.js';
import { Data, Id, IdParams, Message, Nullable, named, Paginated, ref, SiteKeyParam, Timestamp } from '../../shared/schemas.js';
import type { AppModule } from '../types.js';
import { URL_CHANGED_JOB } from '../seo/seo.urls.js';
import { RedirectCache } from './redirects.cache.js';
import { HitRecorder, type Visitor } from './redirects.hits.js';
import { DEFAULT_LOG_RETENTION_DAYS, deleteOldLogs, retentionPeriods } from './redirects.repository.js';
import { type RedirectsContext, redirects, STATUS_CODES } from './redirects.resource.js';
import * as service from './redirects.service.js';
import { apacheExport, csvExport, type ExportFormat, nginxExport, redirectImport } from './redirects.transfer.js';

const tags = ['Redirects'];

const RedirectRef = ref(redirects.schemas.Schema);
const RedirectCreate = redirects.schemas.CreateBody;

const RedirectLogRef = ref(
  named(
    'RedirectLog',
    Type.Object({
      id: Type.Integer(),
      redirectId: Type.Integer(),
      referrer: Nullable(Type.String()),
      userAgent: Nullable(Type.String()),
      ipAddress: Nullable(Type.String({ description: 'Anonymised (last octet, or last 80 bits, zeroed) unless the site turned that off' })),
      createdAt: Timestamp,
    }),
  ),
);

const NotFoundEntryRef = ref(
  named(
    'RedirectNotFoundEntry',
    Type.Object({
      id: Type.Integer(),
      path: Type.String({ description: 'The path that matched no redirect (query string removed)' }),
      hits: Type.Integer(),
      lastReferrer: Nullable(Type.String()),
      firstSeenAt: Timestamp,
      lastSeenAt: Timestamp,
    }),
  ),
);

const RedirectStats = named(
  'RedirectStats',
  Type.Object({ total: Type.Integer(), active: Type.Integer(), inactive: Type.Integer(), totalHits: Type.Integer() }),
);

const RedirectSettingsRef = ref(
  named(
    'RedirectSettings',
    Type.Object({
      logRetentionDays: Type.Integer({ description: `Days hit logs and 404 entries are kept (default ${DEFAULT_LOG_RETENTION_DAYS}; 0 keeps them)` }),
      anonymizeIp: Type.Boolean({ description: 'Store addresses with the last octet (IPv4) or last 80 bits (IPv6) zeroed (default true)' }),
      redirectOnSlugChange: Type.Boolean({
        description:
          'A published content whose URL changes (slug, or first category in nested mode) gets a 301 from its old path (default false, as the spec says a slug change creates no redirect)',
      }),
    }),
  ),
);
const SettingsUpdate = Type.Object(
  {
    logRetentionDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650 })),
    anonymizeIp: Type.Optional(Type.Boolean()),
    redirectOnSlugChange: Type.Optional(Type.Boolean()),
  },
  { minProperties: 1 },
);

const PathQuery = Type.String({ minLength: 1, maxLength: 16_384, pattern: '^/', description: 'The requested path, with its query string (`/old?x=1`)' });
const ResolveQuery = Type.Object({
  path: PathQuery,
  referrer: Type.Optional(Type.String({ maxLength: 2048, description: "The visitor's referrer, as the front end saw it" })),
  userAgent: Type.Optional(Type.String({ maxLength: 1024, description: "The visitor's user agent" })),
  ip: Type.Optional(Type.String({ maxLength: 64, description: "The visitor's address" })),
});
const PublicResolveQuery = Type.Object({ ...ResolveQuery.properties, siteKey: SiteKeyParam });
const Resolved = named(
  'RedirectResolution',
  Type.Object({
    redirectId: Type.Integer(),
    targetUrl: Type.String({ description: 'With capture groups and (when the rule says so) the query string applied' }),
    statusCode: Type.Integer({ enum: [...STATUS_CODES] }),
  }),
);

const BulkDeleteBody = Type.Object({
  ids: Type.Array(Id(), { minItems: 1, maxItems: 50, description: '1-50 ids; others sites’ and unknown ids are skipped' }),
});

const ExportQuery = Type.Object({
  format: Type.Optional(
    Type.Union([Type.Literal('csv'), Type.Literal('nginx'), Type.Literal('apache')], {
      description: '`csv` (default; RFC 4180), `nginx` (map blocks) or `apache` (mod_rewrite rules)',
    }),
  ),
});
const MissParams = Type.Object({ id: Id() });
const MissRedirectBody = Type.Object({
  targetUrl: RedirectCreate.properties.targetUrl,
  statusCode: RedirectCreate.properties.statusCode,
  preserveQueryString: RedirectCreate.properties.preserveQueryString,
  note: RedirectCreate.properties.note,
});

function visitorOf(req: FastifyRequest, query: { referrer?: string; userAgent?: string; ip?: string }): Visitor {
  const header = (name: string) => {
    const v = req.headers[name];
    return typeof v === 'string' ? v : null;
  };
  return { referrer: query.referrer ?? header('referer'), userAgent: query.userAgent ?? header('user-agent'), ip: query.ip ?? req.ip };
}

/** Redirects (decisions R1-R9): rules, resolution with hit and 404 logs, import and export. */
export const redirectsModule: AppModule = {
  name: 'redirects',
  routes(app, { db, changes }) {
    const cache = new RedirectCache(db);
    const hits = new HitRecorder(db, app.log);
    const ctx: RedirectsContext = { db, cache, hits };
    const r = redirects.routes(db, ctx);
    changes.on('cairn_redirects', (siteId) => cache.forget(siteId));
    hits.start();
    app.addHook('onClose', () => hits.stop());

    app.route(r.list);
    app.route(r.create);

    app.get(
      '/redirects/stats',
      {
        // Writes the buffered hit counts first (service: hits.flush), so may meet a full disk.
        config: { scope: 'redirects.view', writes: true },
        schema: { tags, operationId: 'redirectStats', summary: 'Counts of rules and hits', response: { 200: ref(RedirectStats) } },
      },
      async (req) => service.redirectStats(ctx, req.auth.siteId),
    );

    app.get(
      '/redirects/match',
      {
        config: { scope: 'redirects.view' },
        schema: {
          tags,
          operationId: 'matchRedirect',
          summary: 'The redirect a path would take, without counting a hit',
          querystring: Type.Object({ path: PathQuery }),
          response: { 200: Data(RedirectRef), 404: { $ref: 'Error#' } },
        },
      },
      async (req) => ({ data: await service.matchRedirect(ctx, req.auth.siteId, req.query.path) }),
    );

    const resolveDoc =
      'Exact rules win, then regex rules by id (the oldest first). Answers the target with `$1`-`$9` filled in and, for rules that keep it, the ' +
      "query string; counts the hit and logs referrer, user agent and address (the `referrer`, `userAgent` and `ip` parameters when a front end forwards its visitor's, " +
      "else this request's). A path no rule matches is a 404, counted in the 404 log (`GET /redirects/not-found`). Counters and logs are written in batches, about four times a second.";
    app.get(
      '/redirects/resolve',
      {
        config: { scope: 'redirects.view', deliveryOpen: true },
        schema: {
          tags,
          operationId: 'resolveRedirect',
          summary: 'Resolve a path for a front end: the target, counted',
          description: `${resolveDoc} Delivery tokens may call it.`,
          querystring: ResolveQuery,
          response: { 200: Data(ref(Resolved)), 404: { $ref: 'Error#' } },
        },
      },
      async (req) => ({ data: await service.resolveRedirect(ctx, req.auth.siteId, req.query.path, visitorOf(req, req.query)) }),
    );

    app.get(
      '/public/redirects/resolve',
      {
        config: { scope: 'public', siteKey: true },
        schema: {
          tags,
          operationId: 'resolveRedirectPublic',
          summary: 'Resolve a path with the site key (no token)',
          description: `${resolveDoc} Not cached by proxies (\`Cache-Control: no-store\`): each request is a hit.`,
          querystring: PublicResolveQuery,
          response: { 200: Data(ref(Resolved)), 404: { $ref: 'Error#' } },
        },
      },
      async (req, reply) => {
        reply.header('cache-control', 'no-store');
        return { data: await service.resolveRedirect(ctx, req.publicSite.siteId, req.query.path, visitorOf(req, req.query)) };
      },
    );

    app.get(
      '/redirects/export',
      {
        config: { scope: 'redirects.export' },
        schema: {
          tags,
          operationId: 'exportRedirects',
          summary: 'Export every redirect as CSV, nginx or Apache rules (streamed)',
          description:
            "CSV columns: source_path, target_url, status_code, is_regex, is_active, hit_count, preserve_query_string (RFC 4180, UTF-8, cells a spreadsheet would run as a formula prefixed with `'`). " +
            'nginx and Apache outputs hold the active rules.',
          querystring: ExportQuery,
          response: { 200: { description: 'The file', type: 'string' } },
        },
      },
      async (req, reply) => {
        const format: ExportFormat = req.query.format ?? 'csv';
        const rows = service.exportRows(ctx, req.auth.siteId);
        const body = format === 'nginx' ? nginxExport(rows) : format === 'apache' ? apacheExport(rows) : csvExport(rows);
        const [type, ext] = format === 'csv' ? ['text/csv; charset=utf-8', 'csv'] : ['text/plain; charset=utf-8', 'conf'];
        return reply
          .header('content-type', type)
          .header('content-disposition', `attachment; filename="redirects-${format}.${ext}"`)
          .send(Readable.from(body) as never);
      },
    );

    app.post(
      '/redirects/import',
      {
        config: { scope: 'redirects.import' },
        schema: {
          tags,
          operationId: 'importRedirects',
          summary: 'Import redirects from a CSV file (multipart, field `file`) or { entries }',
          description:
            `Up to ${service.MAX_IMPORT_ROWS} rows. CSV header names: the export's (source_path, target_url, status_code, is_regex, is_active, preserve_query_string, note) ` +
            'or the API names. Each row is checked like a create; a bad row is listed by its number and left out whole, a source path the site already has is skipped, ' +
            'the rest is stored in one transaction.',
          body: importBody(service.MAX_IMPORT_ROWS, 'A redirect: sourcePath, targetUrl, statusCode, isRegex, isActive, preserveQueryString, note'),
          response: { 200: ImportResultRef, ...MULTIPART_ERRORS, 413: { $ref: 'Error#' } },
        },
      },
      async (req) => service.importRedirects(ctx, req.auth.siteId, await redirectImport.fromRequest(req)),
    );

    app.post(
      '/redirects/bulk-delete',
      {
        config: { scope: 'redirects.delete' },
        schema: {
          tags,
          operationId: 'bulkDeleteRedirects',
          summary: "Delete up to 50 redirects; answers how many of this site's were deleted",
          body: BulkDeleteBody,
          response: { 200: Type.Object({ deleted: Type.Integer() }) },
        },
      },
      async (req) => ({ deleted: await service.bulkDeleteRedirects(ctx, req.auth.siteId, req.body.ids) }),
    );

    app.get(
      '/redirects/settings',
      {
        config: { scope: 'redirects.view' },
        schema: { tags, operationId: 'getRedirectSettings', summary: "The site's redirect settings", response: { 200: Data(RedirectSettingsRef) } },
      },
      async (req) => ({ data: await service.getSettings(ctx, req.auth.siteId) }),
    );

    app.put(
      '/redirects/settings',
      {
        config: { scope: 'redirects.update' },
        schema: {
          tags,
          operationId: 'updateRedirectSettings',
          summary: "Change the site's redirect settings (partial)",
          body: SettingsUpdate,
          response: { 200: Data(RedirectSettingsRef) },
        },
      },
      async (req) => ({ data: await service.updateSettings(ctx, req.auth.siteId, req.body) }),
    );

    app.get(
      '/redirects/not-found',
      {
        // Writes the buffered hit counts first (service: hits.flush), so may meet a full disk.
        config: { scope: 'redirects.view', writes: true },
        schema: {
          tags,
          operationId: 'listRedirectNotFound',
          summary: 'The 404 log: paths no redirect matched, most frequent first',
          querystring: listQuerySchema(['hits', 'last_seen_at', 'first_seen_at'], {
            search: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Paths containing this text' })),
          }),
          response: { 200: Paginated(NotFoundEntryRef) },
        },
      },
      async (req) => service.listMisses(ctx, req.auth.siteId, req.query),
    );

    app.post(
      '/redirects/not-found/:id/redirect',
      {
        config: { scope: 'redirects.create' },
        schema: {
          tags,
          operationId: 'redirectNotFoundEntry',
          summary: 'Create an exact redirect from a 404 log entry; the entry leaves the log',
          params: MissParams,
          body: MissRedirectBody,
          response: { 201: Data(RedirectRef) },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await service.redirectMiss(ctx, req.auth.siteId, req.params.id, req.body) }),
    );

    app.delete(
      '/redirects/not-found/:id',
      {
        config: { scope: 'redirects.delete' },
        schema: { tags, operationId: 'deleteRedirectNotFoundEntry', summary: 'Remove a 404 log entry', params: MissParams, response: { 200: Message } },
      },
      async (req) => {
        await service.deleteMiss(ctx, req.auth.siteId, req.params.id);
        return { message: '404 log entry deleted.' };
      },
    );

    for (const route of [r.get, r.update, r.delete]) app.route(route);

    app.post(
      '/redirects/:id/toggle',
      {
        config: { scope: 'redirects.update' },
        schema: {
          tags,
          operationId: 'toggleRedirect',
          summary: 'Flip isActive',
          description: 'Turning a rule on checks loops and chains like a create.',
          params: IdParams,
          response: { 200: Data(RedirectRef) },
        },
      },
      async (req) => ({ data: await service.toggleRedirect(ctx, req.auth.siteId, req.params.id) }),
    );

    app.get(
      '/redirects/:id/logs',
      {
        // Writes the buffered hit counts first (service: hits.flush), so may meet a full disk.
        config: { scope: 'redirects.view', writes: true },
        schema: {
          tags,
          operationId: 'listRedirectLogs',
          summary: "A redirect's hit log, newest first",
          params: IdParams,
          querystring: listQuerySchema(['created_at'], {}),
          response: { 200: Paginated(RedirectLogRef) },
        },
      },
      async (req) => service.listLogs(ctx, req.auth.siteId, req.params.id, req.query),
    );
  },

  jobs(worker, { db, changes }) {
    // A published content moved (contents.service announceUrlChange): maybe a 301 from its old path.
    worker.handle(URL_CHANGED_JOB, async (_ctx, job) => {
      const { from, to } = job.payload as { from: string; to: string };
      if (await service.redirectMovedContent(db, job.siteId, from, to)) changes.emit('cairn_redirects', job.siteId);
    });

    // One retention task per period the sites use; the periods are re-read every few minutes.
    let periods: number[] = [DEFAULT_LOG_RETENTION_DAYS];
    let periodsReadAt = 0;
    const tasks = new Map<number, ReturnType<typeof retentionTask>>();
    worker.task('retention.redirect_logs', async (taskCtx) => {
      if (Date.now() - periodsReadAt > 300_000) {
        periods = await retentionPeriods(taskCtx.db);
        periodsReadAt = Date.now();
      }
      for (const days of periods) {
        if (!tasks.has(days))
          tasks.set(
            days,
            retentionTask(days, (db, cutoff, limit) => deleteOldLogs(db, days, cutoff, limit)),
          );
        await tasks.get(days)!(taskCtx);
      }
      return 0;
    });
  },
};
