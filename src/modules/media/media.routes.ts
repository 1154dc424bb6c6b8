import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { invalid } from '../../shared/errors.js';
import { type ListSpec, listQueryFor } from '../../kit/repository.js';
import { Data, HttpUrl, Message, Nullable, named, Paginated, ref, Timestamp, Uuid } from '../../shared/schemas.js';
import { MULTIPART_ONLY_ERRORS, multipartParts } from '../../shared/multipart.js';
import { pageMeta } from '../../shared/pagination.js';
import type { AppModule } from '../types.js';
import { MAX_HEIGHT, VARIANT_WIDTHS } from './media.images.js';
import { mediaTable } from './media.repository.js';
import * as service from './media.service.js';
import { FileBytesCache } from './media.cache.js';
import { MEDIA_EVENTS } from './media.events.js';
import { FILE_NOT_FOUND, sendStoredFile } from './media.delivery.js';

const tags = ['Media'];

/**
 * A multipart body of text parts as the object its route's schema checks (`url=...&alt=...` as
 * `{ url, alt }`): `upload-from-url` takes multipart as well as JSON (shared decisions M2). A
 * file part is drained and refused: the file comes from the URL.
 */
async function multipartFieldsAsBody(req: FastifyRequest): Promise<void> {
  if (!req.isMultipart()) return;
  const fields: Record<string, string> = {};
  let file: string | null = null;
  for await (const part of req.parts()) {
    if (part.type === 'file') {
      file = part.fieldname;
      part.file.resume();
    } else fields[part.fieldname] = String(part.value);
  }
  if (file !== null)
    throw invalid('VALIDATION_FAILED', file, 'upload-from-url takes text fields only (url, name, alt, title, folderId): the file comes from the URL.');
  req.body = fields;
}
const Params = Type.Object({ id: Uuid });
const Url = Type.String({ description: 'On MEDIA_PUBLIC_URL (a CDN) or PUBLIC_URL' });

const FILE = 'https://cms.example.com/files/8d1f4b2a-6c3e-4f70-9a18-2b5c7e9d0f41/e1c0a7f3-94b2-4d6e-8f15-3a2c9b7d6e08/cairn-on-a-hill.webp';
const mediaFileExample = {
  id: 'e1c0a7f3-94b2-4d6e-8f15-3a2c9b7d6e08',
  filename: 'cairn-on-a-hill.webp',
  originalName: 'IMG_2041.jpg',
  mimeType: 'image/webp',
  size: 184_320,
  width: 2000,
  height: 1333,
  alt: 'A cairn on a hill',
  title: 'Cairn at dawn',
  description: null,
  url: FILE,
  variants: { thumbnail: `${FILE}?w=150`, card: `${FILE}?w=400`, content: `${FILE}?w=800`, medium: `${FILE}?w=1200` },
  folderId: '7b2e9c40-1f8a-4d63-b5e7-0c9a2d4f6e18',
  focalX: 0.5,
  focalY: 0.35,
  deletedAt: null,
  createdAt: '2026-03-10T14:22:05.000Z',
  updatedAt: '2026-03-10T14:22:05.000Z',
};

const MediaFile = named(
  'MediaFile',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    filename: Type.String({ description: 'The served name: a slug of the original, with the extension of the stored type' }),
    originalName: Type.String(),
    mimeType: Type.String({ description: 'Taken from the bytes, never from the name' }),
    size: Type.Integer(),
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
    alt: Nullable(Type.String()),
    title: Nullable(Type.String()),
    description: Nullable(Type.String()),
    url: Url,
    variants: Nullable(
      Type.Object(
        { thumbnail: Url, card: Url, content: Url, medium: Url },
        { description: '`?w=150`, `400`, `800`, `1200`: raster images only; never wider than the image' },
      ),
    ),
    folderId: Nullable(Type.String({ format: 'uuid' })),
    focalX: Nullable(Type.Number()),
    focalY: Nullable(Type.Number()),
    deletedAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  [mediaFileExample],
);
const MediaDetail = named(
  'MediaFileDetail',
  Type.Object({
    ...MediaFile.properties,
    folder: Nullable(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() })),
    references: Type.Object({ contents: Type.Integer(), siteBlocks: Type.Integer() }),
  }),
  [{ ...mediaFileExample, folder: { id: mediaFileExample.folderId, name: 'Landscapes' }, references: { contents: 2, siteBlocks: 1 } }],
);

const MediaReference = named(
  'MediaReference',
  Type.Object({
    type: Type.Union([Type.Literal('content'), Type.Literal('siteBlock')]),
    id: Type.Integer(),
    title: Type.String({ description: "The content's title or the site block's name" }),
  }),
);

const mediaList = {
  sort: ['created_at', 'updated_at', 'filename', 'size'],
  search: ['filename', 'original_name', 'alt', 'title'],
  common: ['search', 'ids', 'excludeIds'],
  idType: 'uuid',
  filters: {
    folderId: Type.Optional(Type.Union([Uuid, Type.Literal('root')], { description: 'Files of this folder (`root`: outside any folder)' })),
    type: Type.Optional(Type.String({ maxLength: 100, description: '`image`, `video`, `audio`, `document`, or a MIME type' })),
    mimeType: Type.Optional(Type.String({ maxLength: 100 })),
    sizeMin: Type.Optional(Type.Integer({ minimum: 0, description: 'Bytes, at least' })),
    sizeMax: Type.Optional(Type.Integer({ minimum: 0, description: 'Bytes, at most' })),
    unused: Type.Optional(Type.Boolean({ description: 'Only files no content or site block uses (true), or only used ones (false)' })),
  },
  apply: (qb, query) => service.applyMediaFilters(qb, query),
} satisfies ListSpec<any, any>;
const trashList = {
  ...mediaList,
  sort: ['deleted_at', 'created_at', 'filename', 'size'],
  apply: (qb, query) => service.applyMediaFilters(qb, { ...query, trashed: true }),
} satisfies ListSpec<any, any>;
const ListQuery = listQueryFor(mediaList);
const TrashQuery = listQueryFor(trashList);

const FileParams = Type.Object({ siteId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }), filename: Type.String({ maxLength: 300 }) });
const FileQuery = Type.Object({
  w: Type.Optional(Type.String({ description: `A variant width: ${VARIANT_WIDTHS.join(', ')}` })),
  h: Type.Optional(
    Type.String({ description: `A height of 1-${MAX_HEIGHT} px (with \`w\`): the image cut to w×h around its focal point, or fitted inside it` }),
  ),
  fit: Type.Optional(
    Type.String({ description: '`cover` (the default: fill w×h, cropping around the focal point) or `contain` (fit inside w×h, nothing cut)' }),
  ),
});

/** `?w=&h=&fit=` checked (decisions M9, M16): a message for a 400, or the size asked. */
function transformOf(q: { w?: string; h?: string; fit?: string }): string | { w?: number; h?: number; fit: 'cover' | 'contain' } {
  const w = q.w === undefined ? undefined : Number(q.w);
  if (w !== undefined && !VARIANT_WIDTHS.includes(w as never)) return `w must be one of ${VARIANT_WIDTHS.join(', ')}.`;
  const h = q.h === undefined ? undefined : /^\d{1,4}$/.test(q.h) ? Number(q.h) : Number.NaN;
  if (h !== undefined && (!(h >= 1 && h <= MAX_HEIGHT) || w === undefined)) return `h must be a whole number from 1 to ${MAX_HEIGHT}, with w.`;
  if (q.fit !== undefined && (h === undefined || (q.fit !== 'cover' && q.fit !== 'contain'))) return 'fit must be cover or contain, with w and h.';
  return { w, h, fit: q.fit === 'contain' ? 'contain' : 'cover' };
}
/** The media library (spec "Media", decisions M1-M5, M8): uploads, the list, trash, delivery at /files. */
export const mediaModule: AppModule<FileBytesCache> = {
  name: 'media',
  events: MEDIA_EVENTS,
  init: () => new FileBytesCache(),
  routes(app, { db, storage, config }) {
    const base = config.mediaPublicUrl;
    const present = (rows: Array<Record<string, unknown>>) => rows.map((r) => service.toMedia(r as never, base));

    // The list and the trash: the same machinery, the trash sorted by deletedAt too.
    for (const [url, operationId, summary, spec, querystring] of [
      ['/media', 'listMedia', 'List files (trashed ones left out)', mediaList, ListQuery],
      ['/media/trash', 'listMediaTrash', 'Trashed files, with deletedAt', trashList, TrashQuery],
    ] as const) {
      app.get(
        url,
        // The trash is the editors' own: not for delivery tokens (issue 36 item 8), so never in the delivery cache.
        {
          config: { scope: 'media.view', ...(url === '/media/trash' ? { managementOnly: true } : {}) },
          schema: { tags, operationId, summary, querystring, response: { 200: Paginated(ref(MediaFile)) } },
        },
        async (req) => {
          const query = req.query as { page: number; limit: number };
          const { rows, total } = await mediaTable.list(db, req.auth.siteId, query as never, spec);
          return { data: present(rows), meta: pageMeta(total, query.page, query.limit) };
        },
      );
    }

    app.delete(
      '/media/trash',
      {
        config: { scope: 'media.delete' },
        schema: {
          tags,
          operationId: 'emptyMediaTrash',
          summary: "Empty this site's trash for good",
          response: { 200: Type.Object({ deleted: Type.Integer() }) },
        },
      },
      async (req) => ({ deleted: await service.emptyTrash(db, storage, req.auth.siteId) }),
    );

    app.post(
      '/media/upload',
      {
        config: { scope: 'media.upload' },
        schema: {
          tags,
          operationId: 'uploadMedia',
          summary: 'Upload a file (multipart/form-data)',
          description:
            'Parts: `file` (required; at most 50 MiB, one byte more is a 413 and nothing is stored), `alt`, `title`, `folderId`, and for images `maxWidth` (100-4000), `quality` (50-100), `optimize` (true: re-encode as WebP). The type is read from the bytes. Raster images are decoded and written again (orientation applied, location metadata dropped) with variants 150, 400, 800 and 1200 px wide, never upscaled; animations keep their frames; SVG is stored as sent and served sandboxed.',
          consumes: ['multipart/form-data'],
          response: {
            201: Data(ref(MediaFile)),
            ...MULTIPART_ONLY_ERRORS,
            413: { $ref: 'Error#', description: '`PAYLOAD_TOO_LARGE`: the file is over 50 MiB' },
            503: {
              $ref: 'Error#',
              description:
                '`SERVICE_UNAVAILABLE`: file storage or the database failed or did not answer in time; nothing was stored. Retry after `Retry-After` seconds.',
            },
          },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await service.upload(db, storage, req.auth.siteId, multipartParts(req, service.UPLOAD_PARTS), base) }),
    );

    app.post(
      '/media/upload-from-url',
      {
        config: { scope: 'media.upload' },
        // Multipart text parts become the body the schema checks, as JSON would be (shared decisions M2).
        preValidation: multipartFieldsAsBody,
        schema: {
          tags,
          operationId: 'uploadMediaFromUrl',
          summary: 'Fetch a file from a public URL into the library',
          description:
            'http(s) only; every address the name resolves to, at every redirect (at most 3), must be public; at most 50 MiB and 30 s. Any refusal is a 422 `URL_FETCH_FAILED` on `url`. Then stored like an upload. ' +
            'The fields come as JSON or as multipart/form-data text parts (shared decisions M2); a file part is a 422.',
          consumes: ['application/json', 'multipart/form-data'],
          body: Type.Object({
            url: HttpUrl({ description: 'Where the file is' }),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "The file's name (default: the URL's last path segment)" })),
            alt: Type.Optional(Type.String({ maxLength: 1000 })),
            title: Type.Optional(Type.String({ maxLength: 255 })),
            folderId: Type.Optional(Uuid),
          }),
          response: { 201: Data(ref(MediaFile)) },
        },
      },
      async (req, reply) =>
        reply.code(201).send({
          data: await service.uploadFromUrl(db, storage, req.auth.siteId, req.body, base, {
            timeoutMs: config.mediaFetchTimeoutMs,
            allowPrivateNetwork: config.allowPrivateNetwork,
          }),
        }),
    );

    app.post(
      '/media/:id/replace',
      {
        config: { scope: 'media.update' },
        schema: {
          tags,
          operationId: 'replaceMedia',
          summary: 'New bytes for a file: same id and URL, new ETag, variants made again',
          description: 'The same multipart parts as an upload (`file`, `maxWidth`, `quality`, `optimize`). The served name stays, whatever the new type.',
          params: Params,
          consumes: ['multipart/form-data'],
          response: {
            200: Data(ref(MediaFile)),
            ...MULTIPART_ONLY_ERRORS,
            413: { $ref: 'Error#', description: '`PAYLOAD_TOO_LARGE`: the file is over 50 MiB' },
            503: {
              $ref: 'Error#',
              description:
                '`SERVICE_UNAVAILABLE`: file storage or the database failed or did not answer in time; nothing was stored. Retry after `Retry-After` seconds.',
            },
          },
        },
      },
      async (req) => ({ data: await service.replace(db, storage, req.auth.siteId, req.params.id, multipartParts(req, service.UPLOAD_PARTS), base) }),
    );

    app.get(
      '/media/:id',
      {
        config: { scope: 'media.view' },
        schema: {
          tags,
          operationId: 'getMedia',
          summary: 'A file with its folder and references',
          description: 'A trashed file answers a management token (with deletedAt) and is a 404 to a delivery token.',
          params: Params,
          response: { 200: Data(ref(MediaDetail)) },
        },
      },
      // A trashed file is a 404 to a delivery token, as it is left out of its lists (issue 36 item 8).
      async (req) => ({ data: await service.getMedia(db, req.auth.siteId, req.params.id, base, req.auth.kind === 'delivery') }),
    );

    app.put(
      '/media/:id',
      {
        config: { scope: 'media.update' },
        schema: {
          tags,
          operationId: 'updateMedia',
          summary: 'Alt text, title, description, focal point (the file stays)',
          params: Params,
          body: Type.Object(
            {
              alt: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
              title: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
              description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
              focalX: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Where crops centre, 0 (left) to 1 (right)' }))),
              focalY: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1, description: '0 (top) to 1 (bottom)' }))),
            },
            { minProperties: 1 },
          ),
          response: { 200: Data(ref(MediaDetail)) },
        },
      },
      async (req) => ({ data: await service.updateMedia(db, storage, req.auth.siteId, req.params.id, req.body, base) }),
    );

    app.delete(
      '/media/:id',
      {
        config: { scope: 'media.delete' },
        schema: {
          tags,
          operationId: 'trashMedia',
          summary: `Move to the trash (the URL keeps working ${service.TRASH_DAYS} days)`,
          params: Params,
          response: { 200: Message },
        },
      },
      async (req) => {
        await service.trash(db, req.auth.siteId, req.params.id, true, base);
        return { message: 'Media file moved to the trash.' };
      },
    );

    app.get(
      '/media/:id/references',
      {
        // It names drafts and unpublished site blocks: not for delivery tokens (decisions M15).
        config: { scope: 'media.view', managementOnly: true },
        schema: {
          tags,
          operationId: 'listMediaReferences',
          summary: 'The contents (featured image, body) and site blocks (image and file fields) that use a file',
          params: Params,
          response: { 200: Type.Object({ data: Type.Array(ref(MediaReference)) }) },
        },
      },
      async (req) => ({ data: await service.mediaReferences(db, req.auth.siteId, req.params.id) }),
    );

    app.post(
      '/media/:id/restore',
      {
        config: { scope: 'media.update' },
        schema: { tags, operationId: 'restoreMedia', summary: 'Bring a trashed file back', params: Params, response: { 200: Data(ref(MediaFile)) } },
      },
      async (req) => ({ data: await service.trash(db, req.auth.siteId, req.params.id, false, base) }),
    );

    app.delete(
      '/media/:id/force',
      {
        config: { scope: 'media.delete' },
        schema: { tags, operationId: 'forceDeleteMedia', summary: 'Delete for good (the URL is a 404 at once)', params: Params, response: { 200: Message } },
      },
      async (req) => {
        await service.forceDelete(db, storage, req.auth.siteId, req.params.id);
        return { message: 'Media file deleted.' };
      },
    );
  },

  rootRoutes(app, { db, storage }, cache) {
    app.get(
      '/files/:siteId/:id/:filename',
      {
        // A size asked for the first time is made and stored (503/507 like any write).
        config: { scope: 'public', writes: true },
        schema: {
          tags,
          operationId: 'getMediaFile',
          summary: 'A media file at its public URL (no token)',
          description: `\`?w=\` one of ${VARIANT_WIDTHS.join(', ')} picks a variant (any other width is a 400); with \`h\` (1-${MAX_HEIGHT}) and \`fit\` (\`cover\`, \`contain\`) the image is cut around its focal point or fitted inside. A width of a still image is sent as AVIF or WebP when \`Accept\` takes it (\`Vary: Accept\`). Sizes are made once and kept. ETag, 304, Range (206). A trashed file answers for ${service.TRASH_DAYS} days; a deleted one is a 404.`,
          params: FileParams,
          querystring: FileQuery,
          response: {
            200: { description: 'The file, or the variant asked for (206 for a Range)', type: 'string', format: 'binary' },
            400: { $ref: 'Error#', description: '`BAD_REQUEST`: a width that is not one of the variants, or a bad height or fit' },
            404: { $ref: 'Error#', description: '`NOT_FOUND`: no such file on that site, or it was deleted' },
          },
        },
      },
      async (req, reply) => {
        const asked = transformOf(req.query);
        if (typeof asked === 'string') return reply.code(400).send({ statusCode: 400, error: 'Bad Request', code: 'BAD_REQUEST', message: asked });
        const picked = await service.pickServedFile(db, storage, req.params, asked, req.headers.accept);
        if (!picked) return reply.code(404).send(FILE_NOT_FOUND);
        if (picked.varyAccept) reply.header('vary', 'Accept');
        reply.header('x-content-type-options', 'nosniff');
        // SVG (and anything that is not an image) can never run script in this origin.
        if (picked.svg) reply.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
        return sendStoredFile(req, reply, storage, cache, picked.file, 'public, max-age=86400, stale-while-revalidate=604800');
      },
    );
  },

  jobs(worker, { db, storage }) {
    worker.handle(service.SETTLE_JOB, (_ctx, job) => service.settleJob(db, storage, job.siteId, job.payload as unknown as service.SettlePayload));
    // Trashed files past TRASH_DAYS are purged (decisions M3); at most every ten minutes.
    let purgedAt = 0;
    worker.task('media.purge_trash', async () => {
      if (Date.now() - purgedAt < 600_000) return 0;
      purgedAt = Date.now();
      return service.emptyTrash(db, storage, null, new Date(Date.now() - service.TRASH_DAYS * 86_400_000).toISOString());
    });
  },
};
