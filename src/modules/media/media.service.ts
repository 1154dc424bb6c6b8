import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Multipart } from '@fastify/multipart';
import { now, parseJson, toJson } from '../../db/json.js';
import type { Db, Executor } from '../../db/types.js';
import { AppError, invalid, isDiskFull, notFound } from '../../shared/errors.js';
import { slugify } from '../../shared/slug.js';
import { cancelJob, emitEvent, scheduleJob } from '../../jobs/outbox.js';
import { FetchRefused, getGuarded } from '../../shared/outbound.js';
import { type FileStorage, mediaPrefix, sniffType } from '../../shared/storage.js';
import { type DerivativeSpec, isRaster, negotiatedFormat, processImage, renderDerivative, VARIANT_NAMES } from './media.images.js';
import { countReferences, listReferences } from './media.references.js';
import * as repo from './media.repository.js';
import type { MediaRow } from './media.repository.js';

/** Uploads up to 50 MiB, exactly (decisions M1). */
export const MAX_UPLOAD_BYTES = 52_428_800;
/** A trashed file's URL works this long, then the purge removes it (decisions M3). */
export const TRASH_DAYS = 30;

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/avif': 'avif',
  'image/svg+xml': 'svg',
  'application/pdf': 'pdf',
  'application/zip': 'zip',
  'text/plain': 'txt',
  'video/mp4': 'mp4',
  'video/quicktime': 'mov',
  'video/webm': 'webm',
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
  'audio/wav': 'wav',
};

/** A new file's original (an upload writes its objects in the file's own folder). */
export const originalKey = (siteId: string, id: string) => `${mediaPrefix(siteId, id)}/original`;
/**
 * The folder of a file's objects, its original's (`storage_key`) and its variants': the file's own
 * folder after an upload, a new folder inside it after each replace (decisions HF8), so the new
 * objects never overwrite those the committed row still describes.
 */
export const objectsDir = (storageKey: string) => storageKey.slice(0, storageKey.lastIndexOf('/'));
/** A stored variant of the file whose original is at `storageKey`. */
export const variantKey = (storageKey: string, width: number) => `${objectsDir(storageKey)}/w${width}`;

/** The served name: the original name as a slug, with the extension of the stored type (never the client's). */
function servedName(original: string, type: string): string {
  const base = original.replace(/\.[^.]*$/, '');
  return `${slugify(base, 120) || 'file'}.${EXTENSIONS[type] ?? 'bin'}`;
}

const etagOf = (body: Buffer) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/** The API shape of a file (spec "Media file"): its URL on the public base, and the variants' URLs for raster images. */
export function toMedia(r: MediaRow, baseUrl: string) {
  const url = `${baseUrl}/files/${r.site_id}/${r.id}/${r.filename}`;
  const v = VARIANT_NAMES;
  const variants = isRaster(r.mime_type)
    ? { thumbnail: `${url}?w=${v.thumbnail}`, card: `${url}?w=${v.card}`, content: `${url}?w=${v.content}`, medium: `${url}?w=${v.medium}` }
    : null;
  return {
    id: r.id,
    filename: r.filename,
    originalName: r.original_name,
    mimeType: r.mime_type,
    size: Number(r.size),
    width: r.width === null ? null : Number(r.width),
    height: r.height === null ? null : Number(r.height),
    alt: r.alt,
    title: r.title,
    description: r.description,
    url,
    variants,
    folderId: r.folder_id,
    focalX: r.focal_x === null ? null : Number(r.focal_x),
    focalY: r.focal_y === null ? null : Number(r.focal_y),
    deletedAt: r.deleted_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export interface UploadFields {
  alt?: string;
  title?: string;
  folderId?: string;
  maxWidth?: number;
  quality?: number;
  optimize?: boolean;
}

/** The text parts of an upload, checked like a JSON body would be (422 naming each field). */
function uploadFields(raw: Record<string, string>): UploadFields {
  const out: UploadFields = {};
  const int = (name: string, min: number, max: number) => {
    const v = raw[name];
    if (v === undefined || v === '') return undefined;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw invalid('VALIDATION_FAILED', name, `must be a whole number from ${min} to ${max}`);
    return Number(v);
  };
  out.maxWidth = int('maxWidth', 100, 4000);
  out.quality = int('quality', 50, 100);
  if (raw.optimize !== undefined && raw.optimize !== '') {
    if (!['true', 'false', '1', '0'].includes(raw.optimize)) throw invalid('VALIDATION_FAILED', 'optimize', 'must be true or false');
    out.optimize = raw.optimize === 'true' || raw.optimize === '1';
  }
  for (const [name, max] of [
    ['alt', 1000],
    ['title', 255],
  ] as const) {
    const v = raw[name];
    if (v === undefined) continue;
    if (v.length > max) throw invalid('VALIDATION_FAILED', name, `must be at most ${max} characters`);
    out[name] = v;
  }
  if (raw.folderId) {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw.folderId)) throw invalid('VALIDATION_FAILED', 'folderId', 'must be a UUID');
    out.folderId = raw.folderId.toLowerCase();
  }
  return out;
}

export async function toBuffer(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * An upload (decisions M1, M8, G21): the multipart body read as a stream (the scope was checked
 * before a byte was read), the file written to a temporary key while it arrives, 413 beyond
 * 50 MiB; its type from its bytes; raster images decoded and written again with their variants.
 * The stored objects are promoted, then the row is committed; any failure leaves neither.
 */
type StreamedFile = { tempKey: string; size: number; head: Buffer; name: string };

/** The parts of an upload's multipart body, read as they arrive (the route's `req.parts(UPLOAD_PARTS)`). */
export type MultipartParts = AsyncIterable<Multipart>;
/** How an upload's body is read: one file of at most 50 MiB (cut, then a 413), a few small fields. */
export const UPLOAD_PARTS = { throwFileSizeLimit: false, limits: { files: 1, fileSize: MAX_UPLOAD_BYTES, fields: 10, fieldSize: 10_000, parts: 12 } };

/**
 * A multipart body's `file` (to a temporary key, added to `temps`) and its text parts. The body is
 * read to its end whatever happens: past the limit the file is cut and the 413 comes after.
 */
async function readMultipart(parts: MultipartParts, storage: FileStorage, temps: string[]): Promise<{ file: StreamedFile; raw: Record<string, string> }> {
  const raw: Record<string, string> = {};
  let file: (StreamedFile & { truncated: boolean }) | null = null;
  for await (const part of parts) {
    if (part.type === 'field') {
      if (typeof part.value === 'string' && part.fieldname !== '__proto__') raw[part.fieldname] = part.value;
      continue;
    }
    if (part.fieldname !== 'file' || file) {
      for await (const _ of part.file) {
        // read and dropped
      }
      continue;
    }
    let head = Buffer.alloc(0);
    const body = Readable.from(
      (async function* () {
        for await (const chunk of part.file as AsyncIterable<Buffer>) {
          if (head.length < 512) head = Buffer.concat([head, chunk.subarray(0, 512 - head.length)]);
          yield chunk;
        }
      })(),
    );
    const { tempKey, bytes } = await storage.upload(body);
    temps.push(tempKey);
    // Never thrown inside the loop: leaving it early would leave the rest of the body unread.
    file = { tempKey, size: bytes, head, name: part.filename || 'file', truncated: part.file.truncated };
  }
  if (file?.truncated) throw new AppError('PAYLOAD_TOO_LARGE', { message: `A file is at most ${MAX_UPLOAD_BYTES} bytes (50 MiB).` });
  if (!file) throw invalid('VALIDATION_FAILED', 'file', 'is required (multipart field "file")');
  if (file.size === 0) throw invalid('VALIDATION_FAILED', 'file', 'is empty');
  return { file, raw };
}

/** Runs `work` with a list of temporary keys it adds to; whatever is still temporary at the end goes (a failed request leaves no file). */
async function withTemps<T>(storage: FileStorage, work: (temps: string[]) => Promise<T>): Promise<T> {
  const temps: string[] = [];
  try {
    return await work(temps);
  } finally {
    await Promise.all(temps.map((t) => storage.discard(t)));
  }
}

/**
 * An upload (decisions M1, M8, G21): the multipart body read as a stream (the scope was checked
 * before a byte was read), the file written to a temporary key while it arrives, 413 beyond
 * 50 MiB; its type from its bytes; raster images decoded and written again with their variants.
 * The stored objects are promoted, then the row is committed (storeUpload); any failure leaves neither.
 */
export function upload(db: Db, storage: FileStorage, siteId: string, parts: MultipartParts, baseUrl: string) {
  return withTemps(storage, async (temps) => {
    const { file, raw } = await readMultipart(parts, storage, temps);
    return storeUpload(db, storage, siteId, file, uploadFields(raw), baseUrl, temps);
  });
}

interface Prepared {
  type: string;
  size: number;
  width: number | null;
  height: number | null;
  etag: string;
  variantWidths: number[];
  objects: Array<{ tempKey: string; key: string }>;
}

/** The objects a file is stored as (the original, and for raster images their variants), still under temporary keys. */
async function prepareObjects(storage: FileStorage, storageKey: string, file: StreamedFile, options: UploadFields, temps: string[]): Promise<Prepared> {
  const sniffed = sniffType(file.head) ?? 'application/octet-stream';
  const stored = await storage.read(file.tempKey);
  const bytes = await toBuffer(stored!.stream);
  if (!isRaster(sniffed)) {
    return {
      type: sniffed,
      size: file.size,
      width: null,
      height: null,
      etag: etagOf(bytes),
      variantWidths: [],
      objects: [{ tempKey: file.tempKey, key: storageKey }],
    };
  }
  const image = await processImage(bytes, sniffed, options);
  const objects: Prepared['objects'] = [];
  const put = async (body: Buffer, key: string) => {
    const { tempKey } = await storage.upload(Readable.from([body]));
    temps.push(tempKey);
    objects.push({ tempKey, key });
  };
  await put(image.body, storageKey);
  for (const v of image.variants) await put(v.body, variantKey(storageKey, v.width));
  return {
    type: image.type,
    size: image.body.length,
    width: image.width,
    height: image.height,
    etag: etagOf(image.body),
    variantWidths: image.variants.map((v) => v.width),
    objects,
  };
}

async function promoteAll(storage: FileStorage, objects: Prepared['objects'], temps: string[]) {
  for (const o of objects) {
    await storage.promote(o.tempKey, o.key);
    temps.splice(temps.indexOf(o.tempKey), 1);
  }
}

/** A new file's objects promoted and its row not yet committed are removed this long after, by the worker (see settleJob). */
export const SETTLE_AFTER_MS = 3_600_000;
export const SETTLE_JOB = 'media.settle';
/** The job of a new file (`dir` absent), or of one folder of a file's objects (a replace's, decisions HF8). */
const settleKey = (id: string, dir?: string) => (dir ? `${SETTLE_JOB}:${id}:${dir.slice(dir.lastIndexOf('/') + 1)}` : `${SETTLE_JOB}:${id}`);
/** What a settle job is given: the file, and for a replace the folder of objects it settles and their variant widths. */
export interface SettlePayload {
  id: string;
  dir?: string;
  widths?: number[];
}

/**
 * Removes one folder's objects of a file: a replace's folder whole (it holds nothing else); in the
 * file's own folder, which also holds the replaces' folders and the sizes made, the original and
 * the variants named.
 */
async function removeObjects(storage: FileStorage, siteId: string, id: string, dir: string, widths: readonly number[]): Promise<void> {
  if (dir !== mediaPrefix(siteId, id)) return storage.deletePrefix(`${dir}/`);
  await storage.delete(`${dir}/original`);
  for (const w of widths) await storage.delete(`${dir}/w${w}`);
}

/**
 * Removes objects no committed row describes: what a failed upload or replace could not clean up
 * itself (the store failed again), a killed process left between promotion and commit, or a
 * replace left of the objects it replaced. A new file's (no `dir`): all its objects unless its row
 * exists. A folder of a replace: its objects unless the row's original is in it by then. The row
 * committed, a new folder's job was cancelled in its transaction; if it runs anyway, the row keeps them.
 */
export async function settleJob(db: Executor, storage: FileStorage, siteId: string, payload: SettlePayload): Promise<void> {
  const row = await repo.findMedia(db, siteId, payload.id);
  if (!row) await storage.deletePrefix(mediaPrefix(siteId, payload.id));
  else if (payload.dir && objectsDir(row.storage_key) !== payload.dir) await removeObjects(storage, siteId, payload.id, payload.dir, payload.widths ?? []);
}

/**
 * A file already streamed to a temporary key (`temps` holds the temporary keys the caller discards
 * at the end; the promoted ones are taken out): checked, images processed, the objects promoted,
 * then the row committed, so a listed row always has its objects (issue 36 item 1). Before the
 * promotion a pending job is recorded that removes the objects unless the row exists by then (a
 * process killed between promotion and commit); a failure here removes them at once. Shared by
 * uploads and uploads from a URL.
 */
export async function storeUpload(db: Db, storage: FileStorage, siteId: string, file: StreamedFile, fields: UploadFields, baseUrl: string, temps: string[]) {
  if (file.size === 0) throw invalid('VALIDATION_FAILED', 'file', 'is empty');
  if (fields.folderId && !(await repo.folderName(db, siteId, fields.folderId))) throw invalid('FOLDER_NOT_FOUND', 'folderId');
  const id = randomUUID();
  const p = await prepareObjects(storage, originalKey(siteId, id), file, fields, temps);
  const at = now();
  const row = {
    id,
    site_id: siteId,
    folder_id: fields.folderId ?? null,
    filename: servedName(file.name, p.type),
    original_name: file.name.split(/[\\/]/).pop()!.slice(0, 255),
    mime_type: p.type,
    size: p.size,
    width: p.width,
    height: p.height,
    alt: fields.alt ?? null,
    title: fields.title ?? null,
    description: null,
    storage_key: originalKey(siteId, id),
    etag: p.etag,
    variant_widths: toJson(p.variantWidths),
    focal_x: null,
    focal_y: null,
    deleted_at: null,
    created_at: at,
    updated_at: at,
  };
  const settleAt = new Date(Date.now() + SETTLE_AFTER_MS).toISOString();
  await scheduleJob(db, { siteId, type: SETTLE_JOB, key: settleKey(id), payload: { id }, runAt: settleAt });
  try {
    await promoteAll(storage, p.objects, temps);
    await db.transaction().execute(async (tx) => {
      await repo.insertMedia(tx, row);
      await emitEvent(tx, siteId, 'media.uploaded', { id, filename: row.filename, mimeType: p.type, size: p.size }, at);
      await cancelJob(tx, siteId, settleKey(id));
    });
  } catch (err) {
    // Nothing was committed: the promoted objects go now, and the pending job with them; if the
    // store fails again, the job removes them later.
    try {
      await storage.deletePrefix(mediaPrefix(siteId, id));
      await cancelJob(db, siteId, settleKey(id));
    } catch {
      // the job stays
    }
    throw err;
  }
  return toMedia((await repo.findMedia(db, siteId, id))!, baseUrl);
}

/**
 * Replace (decisions M3, M12, HF8): the same id and URL (the served name stays, even for another
 * type), new bytes, a new ETag, the variants made again, `media.replaced`. As an upload (HF1), the
 * objects are promoted first, into a new folder of the file's (the committed row's objects are
 * never overwritten), with a pending job that removes them unless the row describes them by then;
 * the row's transaction points it at them, cancels that job and records one for the objects it
 * replaced, which go right after the commit (or, if the store fails then, by that job). Any
 * failure before the commit leaves the row and its objects as they were.
 */
export function replace(db: Db, storage: FileStorage, siteId: string, id: string, parts: MultipartParts, baseUrl: string) {
  return withTemps(storage, async (temps) => {
    const current = await repo.findMedia(db, siteId, id);
    if (!current || current.deleted_at) throw notFound('media file');
    const { file, raw } = await readMultipart(parts, storage, temps);
    const storageKey = `${mediaPrefix(siteId, id)}/r${randomUUID()}/original`;
    const dir = objectsDir(storageKey);
    const p = await prepareObjects(storage, storageKey, file, uploadFields(raw), temps);
    const pending = settleKey(id, dir);
    const settleAt = new Date(Date.now() + SETTLE_AFTER_MS).toISOString();
    await scheduleJob(db, { siteId, type: SETTLE_JOB, key: pending, payload: { id, dir, widths: p.variantWidths }, runAt: settleAt });
    let replaced: SettlePayload;
    try {
      await promoteAll(storage, p.objects, temps);
      replaced = await db.transaction().execute(async (tx) => {
        const at = now();
        const patch = {
          original_name: file.name.split(/[\\/]/).pop()!.slice(0, 255),
          mime_type: p.type,
          size: p.size,
          width: p.width,
          height: p.height,
          storage_key: storageKey,
          etag: p.etag,
          variant_widths: toJson(p.variantWidths),
          updated_at: at,
        };
        // The objects replaced are those of the row as committed now (another replace may have
        // committed since the check above): the update holds only if the row still names them.
        for (;;) {
          const row = await repo.findMedia(tx, siteId, id);
          if (!row || row.deleted_at) throw notFound('media file');
          if (!(await repo.replaceObjects(tx, siteId, id, row.storage_key, patch))) continue;
          await emitEvent(tx, siteId, 'media.replaced', { id, filename: row.filename, mimeType: p.type, size: p.size }, at);
          await cancelJob(tx, siteId, pending);
          const old: SettlePayload = { id, dir: objectsDir(row.storage_key), widths: parseJson<number[]>(row.variant_widths, []) };
          await scheduleJob(tx, { siteId, type: SETTLE_JOB, key: settleKey(id, old.dir), payload: { ...old }, runAt: at });
          return old;
        }
      });
    } catch (err) {
      // Nothing was committed: the promoted objects go now, and the pending job with them; if the
      // store fails again, the job removes them later.
      try {
        await removeObjects(storage, siteId, id, dir, p.variantWidths);
        await cancelJob(db, siteId, pending);
      } catch {
        // the job stays
      }
      throw err;
    }
    // The replaced objects, and the sizes made of them (their keys name the old ETag, so none is
    // served again): a store that fails now leaves them to the job, not the client to retry.
    try {
      await removeObjects(storage, siteId, id, replaced.dir!, replaced.widths!);
      await cancelJob(db, siteId, settleKey(id, replaced.dir));
      await clearDerivatives(storage, siteId, id);
    } catch {
      // the job removes the objects; stale sizes go with the next replace or the file
    }
    return toMedia((await repo.findMedia(db, siteId, id))!, baseUrl);
  });
}

/**
 * An upload from a URL (decisions M2): fetched through the guarded GET (http(s), every address
 * public at every hop, at most 3 redirects, a deadline), capped at 50 MiB while it downloads,
 * then stored like an upload. Every refusal is a 422 on `url` saying why.
 */
export function uploadFromUrl(
  db: Db,
  storage: FileStorage,
  siteId: string,
  input: { url: string; name?: string; alt?: string; title?: string; folderId?: string },
  baseUrl: string,
  fetch: { timeoutMs: number; allowPrivateNetwork: boolean },
) {
  const refused = (why: string) => invalid('URL_FETCH_FAILED', 'url', `The URL ${why}.`);
  return withTemps(storage, async (temps) => {
    let fetched: Awaited<ReturnType<typeof getGuarded>>;
    try {
      // One deadline for the whole fetch, headers and body (getGuarded).
      fetched = await getGuarded(input.url, { ...fetch, maxRedirects: 3 });
    } catch (err) {
      if (err instanceof FetchRefused) throw refused(err.message);
      throw err;
    }
    const { body, finalUrl } = fetched;
    let head = Buffer.alloc(0);
    let tooLarge = false;
    const capped = Readable.from(
      (async function* () {
        let size = 0;
        for await (const chunk of body as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > MAX_UPLOAD_BYTES) {
            tooLarge = true;
            body.destroy();
            return;
          }
          if (head.length < 512) head = Buffer.concat([head, chunk.subarray(0, 512 - head.length)]);
          yield chunk;
        }
      })(),
    );
    let stored: { tempKey: string; bytes: number };
    try {
      stored = await storage.upload(capped);
    } catch (err) {
      // Our own disk being full is not the URL's fault: a 507, not a 422.
      if (isDiskFull(err as Error)) throw err;
      throw refused(err instanceof FetchRefused ? err.message : 'stopped sending before the end');
    }
    temps.push(stored.tempKey);
    if (tooLarge) throw refused(`holds a file larger than ${MAX_UPLOAD_BYTES} bytes (50 MiB)`);
    let name = input.name;
    if (!name) {
      try {
        name = decodeURIComponent(finalUrl.pathname.split('/').pop() ?? '');
      } catch {
        name = '';
      }
    }
    const file = { tempKey: stored.tempKey, size: stored.bytes, head, name: name || 'file' };
    return storeUpload(db, storage, siteId, file, { alt: input.alt, title: input.title, folderId: input.folderId }, baseUrl, temps);
  });
}

export async function getMedia(db: Executor, siteId: string, id: string, baseUrl: string, delivered = false) {
  const row = await repo.findMedia(db, siteId, id);
  if (!row || (delivered && row.deleted_at)) throw notFound('media file');
  const folder = row.folder_id ? ((await repo.folderName(db, siteId, row.folder_id)) ?? null) : null;
  return { ...toMedia(row, baseUrl), folder, references: await countReferences(db, siteId, id) };
}

/** The contents and site blocks that use a file (decisions M15); a trashed file's too. */
export async function mediaReferences(db: Executor, siteId: string, id: string) {
  if (!(await repo.findMedia(db, siteId, id))) throw notFound('media file');
  return listReferences(db, siteId, id);
}

/** A file to serve at its URL: active, or trashed less than TRASH_DAYS ago (decisions M3); `w` one of the variants. */
export async function servedFile(db: Executor, siteId: string, id: string, filename: string, width: number | undefined) {
  const row = await repo.findMedia(db, siteId, id);
  if (!row || row.filename !== filename) return null;
  if (row.deleted_at && Date.now() - Date.parse(row.deleted_at) > TRASH_DAYS * 86_400_000) return null;
  const widths = parseJson<number[]>(row.variant_widths, []);
  const key = width && widths.includes(width) ? variantKey(row.storage_key, width) : row.storage_key;
  return { row, key, etag: width && widths.includes(width) ? `${row.etag.slice(0, -1)}-w${width}"` : row.etag };
}

/** A stored object picked to answer a file URL (media.delivery.ts sends it). */
export interface StoredFile {
  key: string;
  etag: string;
  contentType: string;
  /** Makes the bytes when the object is made on first ask (a size of an image); kept in memory once made. */
  make?: () => Promise<Buffer>;
}

/** What `/files/...` answers: the object, whether it depends on `Accept`, and whether it is an SVG (sandboxed). */
export interface PickedFile {
  file: StoredFile;
  varyAccept: boolean;
  svg: boolean;
}

/**
 * The object a file URL names (decisions M9, M16): the original, a stored variant width, or a
 * derivative (a crop, or a width in the format `Accept` takes), made on first ask. Null: a 404.
 */
export async function pickServedFile(
  db: Executor,
  storage: FileStorage,
  params: { siteId: string; id: string; filename: string },
  asked: { w?: number; h?: number; fit: 'cover' | 'contain' },
  accept: string | undefined,
): Promise<PickedFile | null> {
  const found = await servedFile(db, params.siteId, params.id, params.filename, asked.w);
  if (!found) return null;
  const { row } = found;
  const picked: PickedFile = {
    file: { key: found.key, etag: found.etag, contentType: row.mime_type },
    varyAccept: false,
    svg: row.mime_type === 'image/svg+xml',
  };
  if (!isRaster(row.mime_type) || asked.w === undefined) return picked;
  // A width of a raster image depends on what the reader accepts (AVIF, WebP): caches must know.
  picked.varyAccept = true;
  const format = negotiatedFormat(row.mime_type, accept);
  if (asked.h === undefined && `image/${format}` === row.mime_type) return picked;
  const spec = { width: asked.w, height: asked.h ?? null, fit: asked.fit, focalX: row.focal_x ?? 0.5, focalY: row.focal_y ?? 0.5, format };
  // A plain width is made from its stored variant (smaller); a crop from the original.
  const source = asked.h === undefined ? found.key : row.storage_key;
  const made = derivativeOf(row, spec);
  picked.file = { key: made.key, etag: made.etag, contentType: made.type, make: () => derivativeBytes(db, storage, row, spec, made.key, source) };
  return picked;
}

const TYPE_GROUPS: Record<string, (qb: any) => any> = {
  image: (qb) => qb.where('mime_type', 'like', 'image/%'),
  video: (qb) => qb.where('mime_type', 'like', 'video/%'),
  audio: (qb) => qb.where('mime_type', 'like', 'audio/%'),
  document: (qb) =>
    qb.where((eb: any) => eb.or([eb('mime_type', '=', 'application/pdf'), eb('mime_type', '=', 'text/plain'), eb('mime_type', '=', 'application/zip')])),
};

/** The references of the list's file (media_references_media_idx). */
const usedBy = (eb: any) =>
  eb
    .selectFrom('media_references as r')
    .select(eb.lit(1).as('one'))
    .whereRef('r.site_id', '=', 'media_files.site_id')
    .whereRef('r.media_id', '=', 'media_files.id');

/** The list filters of decisions M5, for active files (`trashed`: the trash). */
export function applyMediaFilters(
  qb: any,
  q: { folderId?: string; type?: string; mimeType?: string; sizeMin?: number; sizeMax?: number; unused?: boolean; trashed?: boolean },
) {
  let out = q.trashed ? qb.where('deleted_at', 'is not', null) : qb.where('deleted_at', 'is', null);
  if (q.folderId) out = q.folderId === 'root' ? out.where('folder_id', 'is', null) : out.where('folder_id', '=', q.folderId);
  if (q.type) out = TYPE_GROUPS[q.type] ? TYPE_GROUPS[q.type]!(out) : out.where('mime_type', '=', q.type);
  if (q.mimeType) out = out.where('mime_type', '=', q.mimeType);
  if (q.sizeMin !== undefined) out = out.where('size', '>=', q.sizeMin);
  if (q.sizeMax !== undefined) out = out.where('size', '<=', q.sizeMax);
  if (q.unused !== undefined) out = out.where((eb: any) => (q.unused ? eb.not(eb.exists(usedBy(eb))) : eb.exists(usedBy(eb))));
  return out;
}

/** Alt text, title, description and the focal point; the file and its URL stay. */
export async function updateMedia(
  db: Db,
  storage: FileStorage,
  siteId: string,
  id: string,
  input: { alt?: string | null; title?: string | null; description?: string | null; focalX?: number | null; focalY?: number | null },
  baseUrl: string,
) {
  const row = await repo.findMedia(db, siteId, id);
  if (!row || row.deleted_at) throw notFound('media file');
  await repo.mediaTable.update(
    db,
    siteId,
    { id },
    { alt: input.alt, title: input.title, description: input.description, focal_x: input.focalX, focal_y: input.focalY, updated_at: now() },
  );
  const focusMoved = (input.focalX !== undefined && input.focalX !== row.focal_x) || (input.focalY !== undefined && input.focalY !== row.focal_y);
  if (focusMoved) await clearDerivatives(storage, siteId, id);
  return getMedia(db, siteId, id, baseUrl);
}

/** To the trash (its URL keeps working for TRASH_DAYS), or back (decisions M3). */
export async function trash(db: Db, siteId: string, id: string, trashed: boolean, baseUrl: string) {
  const row = await repo.findMedia(db, siteId, id);
  if (!row || Boolean(row.deleted_at) === trashed) throw notFound(trashed ? 'media file' : 'trashed media file');
  const at = now();
  await repo.mediaTable.update(db, siteId, { id }, { deleted_at: trashed ? at : null, updated_at: at });
  return toMedia((await repo.findMedia(db, siteId, id))!, baseUrl);
}

/** Removed for good, its URL a 404 at once; the stored objects go after the row. */
export async function forceDelete(db: Db, storage: FileStorage, siteId: string, id: string) {
  await db.transaction().execute(async (tx) => {
    const row = await repo.findMedia(tx, siteId, id);
    if (!row || !(await repo.mediaTable.delete(tx, siteId, { id }))) throw notFound('media file');
    await emitEvent(tx, siteId, 'media.deleted', repo.deletedEvent(row));
  });
  await storage.deletePrefix(mediaPrefix(siteId, id));
}

/** Empties this site's trash (the purge job empties every site's, past TRASH_DAYS). */
export async function emptyTrash(db: Db, storage: FileStorage, siteId: string | null, before?: string): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await db.transaction().execute(async (tx) => {
      const gone = await repo.deleteTrashed(tx, siteId, before);
      for (const r of gone) await emitEvent(tx, r.site_id, 'media.deleted', repo.deletedEvent(r));
      return gone;
    });
    for (const r of rows) await storage.deletePrefix(mediaPrefix(r.site_id, r.id));
    deleted += rows.length;
    if (rows.length < 1000) return deleted;
  }
}

/** Stored derivatives (crops and negotiated formats) per file at most; a replace or a new focal point clears them. */
export const MAX_DERIVATIVES = 64;
/** Derivatives rendered at once per process, and how many may wait: beyond, a 503 (a flood of new sizes never takes the CPU from other requests). */
const RENDER_CONCURRENCY = 2;
const RENDER_QUEUE = 32;

const derivativePrefix = (siteId: string, id: string) => `${mediaPrefix(siteId, id)}/d`;

/** Renders with at most RENDER_CONCURRENCY at once; the same key asked twice renders once. */
class RenderGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly inFlight = new Map<string, Promise<Buffer>>();

  run(key: string, work: () => Promise<Buffer>): Promise<Buffer> {
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    if (this.running >= RENDER_CONCURRENCY && this.waiting.length >= RENDER_QUEUE) {
      throw new AppError('SERVICE_UNAVAILABLE', { message: 'Too many image sizes are being made; retry after the number of seconds in Retry-After.' });
    }
    const p = (async () => {
      if (this.running >= RENDER_CONCURRENCY) await new Promise<void>((resolve) => this.waiting.push(resolve));
      this.running++;
      try {
        return await work();
      } finally {
        this.running--;
        this.waiting.shift()?.();
      }
    })().finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, p);
    return p;
  }
}
const renderGate = new RenderGate();

/**
 * A derivative of a stored raster image (issue 10 item 4, decisions M16): its key names every input
 * (size, fit, focal point, format) and the original's ETag, so neither a replace nor a new focal
 * point serves a stale one; made once from the original (or, for a plain width, from its stored
 * variant) and kept in storage.
 */
export function derivativeOf(row: MediaRow, spec: DerivativeSpec) {
  const fx = Math.round(spec.focalX * 1000);
  const fy = Math.round(spec.focalY * 1000);
  const name = `${spec.width}x${spec.height ?? 0}-${spec.height === null ? 'w' : spec.fit}-${fx}-${fy}-${spec.format}`;
  return {
    key: `${derivativePrefix(row.site_id, row.id)}/${row.etag.slice(1, 12)}-${name}`,
    etag: `${row.etag.slice(0, -1)}-${name}"`,
    type: `image/${spec.format}`,
  };
}

/** The bytes of a derivative (derivativeOf): from storage when made before, else rendered from `sourceKey` and kept. */
export async function derivativeBytes(
  db: Executor,
  storage: FileStorage,
  row: MediaRow,
  spec: DerivativeSpec,
  key: string,
  sourceKey: string,
): Promise<Buffer> {
  const stored = await storage.read(key);
  if (stored) return toBuffer(stored.stream);
  return renderGate.run(key, async () => {
    if ((await storage.list(`${derivativePrefix(row.site_id, row.id)}/`)).length >= MAX_DERIVATIVES) {
      throw new AppError('BAD_REQUEST', { message: `This file has ${MAX_DERIVATIVES} sizes made already; use one of them, or the variants.` });
    }
    const source = await storage.read(sourceKey);
    if (!source) throw notFound('media file');
    const out = await renderDerivative(await toBuffer(source.stream), spec);
    const { tempKey } = await storage.upload(Readable.from([out]));
    await storage.promote(tempKey, key);
    // Deleted meanwhile: its objects went with it, this one goes too.
    if (!(await repo.findMedia(db, row.site_id, row.id))) await storage.delete(key);
    return out;
  });
}

/** Removes a file's derivatives (after a replace or a new focal point: their keys would never be asked again). */
export function clearDerivatives(storage: FileStorage, siteId: string, id: string) {
  return storage.deletePrefix(derivativePrefix(siteId, id));
}
