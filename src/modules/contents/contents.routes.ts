import { Type } from 'typebox';
import type { AppModule } from '../types.js';
import { CopyToLocaleBody, Data, IdParams, Message, TranslationStatus, ref } from '../../shared/schemas.js';
import { PageQuery } from '../../shared/pagination.js';
import * as S from './contents.schemas.js';
import * as service from './contents.service.js';
import { notFound } from '../../shared/errors.js';
import { CONTENT_EVENTS } from './contents.events.js';

const tags = ['Contents'];
/** A status other than draft, and any status change, also needs contents.publish (decisions G12, H10). */
const STATUS_SCOPE = { scope: 'contents.publish', when: 'to create a content in a status other than draft or to change its status' } as const;

const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 500 }) });
const LocaleQuery = Type.Object({ locale: Type.Optional(Type.String({ minLength: 2, maxLength: 35, description: "Default: the site's default locale" })) });
export const contentsModule: AppModule = {
  name: 'contents',
  events: CONTENT_EVENTS,
  jobs(worker, { db }) {
    // Scheduled publishing (decisions C2): the job is written when a content is scheduled.
    worker.handle(service.PUBLISH_JOB, async (_ctx, job) => {
      await service.publishScheduled(db, job.siteId, Number(job.payload.contentId));
    });
  },
  routes(app, { db }) {
    app.get(
      '/contents',
      {
        config: { scope: 'contents.view' },
        schema: {
          tags,
          operationId: 'listContents',
          summary: 'List contents (summaries, no body)',
          description: "Delivery tokens see published contents only; a token with `contents.view.own` sees its user's contents only.",
          querystring: S.ContentListQuery,
          response: { 200: S.ContentSummaryPage },
        },
      },
      async (req) => service.listContents(db, req.auth, req.query),
    );

    app.post(
      '/contents',
      {
        config: { scope: 'contents.create', conditionalScopes: [STATUS_SCOPE] },
        schema: {
          tags,
          operationId: 'createContent',
          summary: 'Create a content',
          description:
            'Status defaults to draft. `scheduled` needs a future `scheduledAt`; `published` and `scheduled` also need `contents.publish`. Send `body` (ProseMirror JSON) or `bodyMarkdown`.',
          body: S.ContentCreate,
          response: { 201: Data(ref(S.ContentRef)) },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await service.createContent(db, req.auth, req.body) }),
    );

    app.get(
      '/contents/search',
      {
        config: { scope: 'contents.view', waitsOnReaderThread: true },
        schema: {
          tags,
          operationId: 'searchContents',
          summary: 'Full-text search: title above slug above body, with <mark> highlights',
          description:
            'Honours every list filter. The text is treated as words, never as query syntax. Results come in relevance order: title matches, then slug, then body. At most the newest 1,000 matches (by id) are ranked and paged; `meta.capped` says when there were more.',
          querystring: S.ContentSearchQuery,
          response: { 200: S.ContentSearchPage },
        },
      },
      async (req) => service.searchContents(db, req.auth, req.query),
    );

    app.post(
      '/contents/bulk/publish',
      {
        config: { scope: 'contents.publish' },
        schema: {
          tags,
          operationId: 'bulkPublishContents',
          summary: 'Publish draft, scheduled and archived contents; published ones are skipped',
          body: S.BulkIds,
          response: { 200: Type.Object({ published: Type.Integer() }) },
        },
      },
      async (req) => ({ published: await service.bulkPublish(db, req.auth, req.body.ids) }),
    );

    app.post(
      '/contents/bulk/archive',
      {
        config: { scope: 'contents.publish' },
        schema: {
          tags,
          operationId: 'bulkArchiveContents',
          summary: 'Archive contents (hidden from delivery tokens); archived ones are skipped',
          body: S.BulkIds,
          response: { 200: Type.Object({ archived: Type.Integer() }) },
        },
      },
      async (req) => ({ archived: await service.bulkArchive(db, req.auth, req.body.ids) }),
    );

    app.post(
      '/contents/bulk/delete',
      {
        config: { scope: 'contents.delete' },
        schema: {
          tags,
          operationId: 'bulkDeleteContents',
          summary: 'Delete contents with their revisions and links; irreversible',
          body: S.BulkIds,
          response: { 200: Type.Object({ deleted: Type.Integer() }) },
        },
      },
      async (req) => ({ deleted: await service.bulkDelete(db, req.auth, req.body.ids) }),
    );

    app.get(
      '/contents/slug/:slug',
      {
        config: { scope: 'contents.view' },
        schema: {
          tags,
          operationId: 'getContentBySlug',
          summary: "A content by slug (in `locale`, default the site's)",
          params: SlugParams,
          querystring: LocaleQuery,
          response: { 200: Data(ref(S.ContentRef)) },
        },
      },
      async (req) => ({ data: await service.getContentBySlug(db, req.auth, req.params.slug, req.query.locale) }),
    );

    app.get(
      '/contents/:id',
      {
        config: { scope: 'contents.view' },
        schema: { tags, operationId: 'getContent', summary: 'A content (bare object)', params: IdParams, response: { 200: ref(S.ContentRef) } },
      },
      async (req) => service.getContent(db, req.auth, req.params.id),
    );

    app.put(
      '/contents/:id',
      {
        config: { scope: 'contents.update', conditionalScopes: [STATUS_SCOPE] },
        schema: {
          tags,
          operationId: 'updateContent',
          summary: 'Update a content (partial); writes a revision',
          description:
            'Omitted fields stay. An update never unpublishes by itself; a `status` of published or scheduled also needs `contents.publish`. Locale and translation group cannot change.',
          params: IdParams,
          body: S.ContentUpdate,
          response: { 200: Data(ref(S.ContentRef)) },
        },
      },
      async (req) => ({ data: await service.updateContent(db, req.auth, req.params.id, req.body) }),
    );

    app.delete(
      '/contents/:id',
      {
        config: { scope: 'contents.delete' },
        schema: { tags, operationId: 'deleteContent', summary: 'Delete a content with its revisions and links', params: IdParams, response: { 200: Message } },
      },
      async (req) => {
        if ((await service.bulkDelete(db, req.auth, [req.params.id])) === 0) throw notFound('content');
        return { message: 'Content deleted.' };
      },
    );

    app.post(
      '/contents/:id/publish',
      {
        config: { scope: 'contents.publish' },
        schema: { tags, operationId: 'publishContent', summary: 'Publish now', params: IdParams, response: { 200: Data(ref(S.ContentRef)) } },
      },
      async (req) => ({ data: await service.updateContent(db, req.auth, req.params.id, { status: 'published' }) }),
    );

    app.post(
      '/contents/:id/unpublish',
      {
        config: { scope: 'contents.publish' },
        schema: { tags, operationId: 'unpublishContent', summary: 'Back to draft', params: IdParams, response: { 200: Data(ref(S.ContentRef)) } },
      },
      async (req) => ({ data: await service.updateContent(db, req.auth, req.params.id, { status: 'draft' }) }),
    );

    app.get(
      '/contents/:id/revisions',
      {
        config: { scope: 'contents.view' },
        schema: {
          tags,
          operationId: 'listContentRevisions',
          summary: 'Revisions, newest first',
          params: IdParams,
          querystring: PageQuery,
          response: { 200: S.RevisionList },
        },
      },
      async (req) => service.listRevisions(db, req.auth, req.params.id, req.query),
    );

    app.get(
      '/contents/:id/revisions/:revisionId',
      {
        config: { scope: 'contents.view' },
        schema: {
          tags,
          operationId: 'getContentRevision',
          summary: 'A revision with its full snapshot',
          params: S.RevisionParams,
          response: { 200: Data(ref(S.RevisionDetailRef)) },
        },
      },
      async (req) => ({ data: await service.getRevision(db, req.auth, req.params.id, req.params.revisionId) }),
    );

    app.post(
      '/contents/:id/revisions/:revisionId/restore',
      {
        config: { scope: 'contents.update' },
        schema: {
          tags,
          operationId: 'restoreContentRevision',
          summary: 'Bring a revision back as a new revision (the status stays)',
          params: S.RevisionParams,
          response: { 200: Data(ref(S.ContentRef)) },
        },
      },
      async (req) => ({ data: await service.restoreRevision(db, req.auth, req.params.id, req.params.revisionId) }),
    );

    app.get(
      '/contents/:id/translations',
      {
        config: { scope: 'contents.view' },
        schema: {
          tags,
          operationId: 'getContentTranslations',
          summary: 'Translation status per enabled locale',
          params: IdParams,
          response: { 200: TranslationStatus },
        },
      },
      async (req) => ({ data: await service.contentTranslations(db, req.auth, req.params.id) }),
    );

    app.post(
      '/contents/:id/copy-to-locale',
      {
        config: { scope: 'contents.create' },
        schema: {
          tags,
          operationId: 'copyContentToLocale',
          summary: 'A draft copy in another locale (same translation group)',
          description: 'Body `{ targetLocale }` (or `{ locale }`). 409 when the group already has a member in that locale.',
          params: IdParams,
          body: CopyToLocaleBody,
          response: { 200: Data(ref(S.ContentRef)), 409: { $ref: 'Error#' } },
        },
      },
      async (req) => ({ data: await service.copyContentToLocale(db, req.auth, req.params.id, req.body) }),
    );
  },
};
