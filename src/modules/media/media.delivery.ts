import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../shared/errors.js';
import { notModified } from '../../shared/http-cache.js';
import type { FileStorage } from '../../shared/storage.js';
import type { FileBytesCache } from './media.cache.js';
import { type StoredFile, toBuffer } from './media.service.js';

export const FILE_NOT_FOUND = { statusCode: 404, error: 'Not Found', code: 'NOT_FOUND', message: 'The file was not found.' };

const RANGE = /^bytes=(\d*)-(\d*)$/;

/** One `bytes=a-b`, `a-` or `-n` range of a file of `size` bytes (inclusive ends); null when it starts past the end. */
function byteRange(m: RegExpExecArray, size: number): { start: number; end: number } | null {
  const start = m[1] ? Number(m[1]) : Math.max(0, size - Number(m[2]));
  const end = m[1] && m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
  return start >= size || start > end ? null : { start, end };
}

/**
 * A row whose object is gone (a store that lost it, a delete between two reads): a 404 like any
 * missing file, as JSON, without the object's headers (a CDN must not keep the 404 for a day).
 */
function gone(reply: FastifyReply) {
  for (const name of ['etag', 'cache-control', 'accept-ranges', 'vary', 'content-security-policy']) reply.removeHeader(name);
  return reply.code(404).type('application/json; charset=utf-8').send(FILE_NOT_FOUND);
}

const unsatisfiable = (reply: FastifyReply, size: number) => reply.code(416).header('content-range', `bytes */${size}`).send();

function partial(reply: FastifyReply, r: { start: number; end: number }, size: number) {
  return reply
    .code(206)
    .header('content-range', `bytes ${r.start}-${r.end}/${size}`)
    .header('content-length', String(r.end - r.start + 1));
}

/**
 * Answers a file: `ETag`, `Cache-Control` and 304 through the one conditional path, then one byte
 * range (206, or 416 when it starts past the end) or the whole file. Small files come from memory
 * (keyed by ETag, so never a replaced version); larger ones are streamed from storage, a range
 * read as a range. Headers of the object itself (`Vary`, a CSP) are the caller's.
 */
export async function sendStoredFile(
  request: FastifyRequest,
  reply: FastifyReply,
  storage: FileStorage,
  cache: FileBytesCache,
  file: StoredFile,
  cacheControl: string,
) {
  reply.header('accept-ranges', 'bytes');
  if (notModified(request, reply, file.etag, cacheControl)) return reply.send();
  reply.header('content-type', file.contentType);
  const given = typeof request.headers.range === 'string' ? RANGE.exec(request.headers.range.trim()) : null;
  const range = given && (given[1] || given[2]) ? given : null;
  let body = cache.get(file.key, file.etag);
  if (!body && file.make) {
    try {
      body = await file.make();
    } catch (err) {
      if (err instanceof AppError && err.statusCode === 404) return gone(reply);
      throw err;
    }
    cache.set(file.key, file.etag, body);
  }
  if (!body) {
    const whole = await storage.read(file.key);
    if (!whole) return gone(reply);
    if (whole.bytes > cache.maxFileBytes) {
      if (!range) return reply.header('content-length', String(whole.bytes)).send(whole.stream);
      whole.stream.destroy();
      const r = byteRange(range, whole.bytes);
      if (!r) return unsatisfiable(reply, whole.bytes);
      const part = await storage.read(file.key, r);
      // Removed between the two reads (a delete, a replace): gone, as the first read would have said.
      if (!part) return gone(reply);
      return partial(reply, r, whole.bytes).send(part.stream);
    }
    body = await toBuffer(whole.stream);
    cache.set(file.key, file.etag, body);
  }
  if (!range) return reply.header('content-length', String(body.length)).send(body);
  const r = byteRange(range, body.length);
  if (!r) return unsatisfiable(reply, body.length);
  return partial(reply, r, body.length).send(body.subarray(r.start, r.end + 1));
}
