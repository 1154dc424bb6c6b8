import { Type } from 'typebox';
import { Data, Nullable, named, ref, Timestamp, Uuid } from '../../shared/schemas.js';
import type { AppModule } from '../types.js';
import { BUNDLE_EVENTS } from './bundles.events.js';
import * as service from './bundles.service.js';

const tags = ['Site bundles'];
const PURGE_INTERVAL_MS = 5 * 60 * 1000;
const scope = 'sites.manage';

const ExportJob = named(
  'SiteExportJob',
  Type.Object({
    id: Uuid,
    status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('ready'), Type.Literal('failed')]),
    withSubmissions: Type.Boolean(),
    bytes: Nullable(Type.Number({ description: 'Size of the bundle once ready' })),
    error: Nullable(Type.String()),
    createdAt: Timestamp,
    finishedAt: Nullable(Timestamp),
    expiresAt: Nullable(Timestamp),
    downloadUrl: Nullable(
      Type.String({ description: 'Where the bundle is downloaded (same token and scope) for an hour once ready: this job with `?download=true`' }),
    ),
  }),
);
const ExportParams = Type.Object({ id: Uuid });

/**
 * Site bundles over HTTP (issue 35 item 4, decisions BN1): an export runs as a job and is
 * downloaded once ready. Imports stay in the CLI (`cairn sites import`), where the operator is.
 */
export const bundlesModule: AppModule = {
  name: 'bundles',
  events: BUNDLE_EVENTS,
  routes(app, { db, storage, config }) {
    app.post(
      '/site/export',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'startSiteExport',
          summary: 'Start an export of the whole site as a bundle (a job)',
          description:
            "Answers 202 with the job; GET /site/export/{id} until `status` is `ready`, then download from `downloadUrl` (the job with `?download=true`) within the hour. The bundle is the one `cairn sites export` writes (docs/site-bundles.md): never tokens, secrets or visitors' addresses.",
          body: Type.Object({ withSubmissions: Type.Optional(Type.Boolean({ description: 'Include form submissions (default false)' })) }),
          response: { 202: Data(Type.Object({ id: Uuid, status: Type.Literal('queued') })) },
        },
      },
      async (req, reply) => reply.code(202).send({ data: await service.startExport(db, req.auth.siteId, req.body?.withSubmissions ?? false) }),
    );
    app.get(
      '/site/export/:id',
      {
        config: { scope },
        schema: {
          tags,
          operationId: 'getSiteExport',
          summary: 'An export job: its status and, once ready, its download (`?download=true`)',
          description:
            'Without `download`: the job, with `downloadUrl` once ready. With `download=true`: the bundle itself (`application/gzip`, a gzip-compressed tar), for an hour after the job is ready; 409 `EXPORT_NOT_READY` before, 410 `EXPORT_EXPIRED` after.',
          params: ExportParams,
          querystring: Type.Object({ download: Type.Optional(Type.Boolean({ description: 'Answer the bundle file instead of the job' })) }),
          response: {
            200: { ...Data(ref(ExportJob)), description: 'The job (application/json), or with download=true the bundle (application/gzip)' },
            404: { $ref: 'Error#' },
            409: { $ref: 'Error#' },
            410: { $ref: 'Error#' },
          },
        },
      },
      async (req, reply) => {
        if (!req.query.download) return { data: await service.getExport(db, req.auth.siteId, req.params.id, config.publicUrl) };
        const file = await service.openExport(db, storage, req.auth.siteId, req.params.id);
        reply
          .header('content-type', 'application/gzip')
          .header('content-length', file.bytes)
          .header('content-disposition', `attachment; filename="${file.filename}"`);
        return reply.send(file.stream as never);
      },
    );
  },
  jobs(worker, { db, storage, config }) {
    worker.handle(service.EXPORT_JOB, (_ctx, job) => service.runExportJob({ db, storage, config }, job.siteId, String(job.payload.exportId)));
    // Bundles are large: an expired one's file goes within minutes, not at the next restart.
    // Exports whose process died are failed at the worker's start and then as often.
    let nextPurgeAt = 0;
    worker.task('bundles.expired-exports', async () => {
      if (Date.now() < nextPurgeAt) return 0;
      await service.failInterruptedExports(db);
      const purged = await service.purgeExpiredExports(db, storage);
      nextPurgeAt = purged ? 0 : Date.now() + PURGE_INTERVAL_MS;
      return 0;
    });
  },
};
