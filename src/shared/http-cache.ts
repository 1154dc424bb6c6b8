import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A strong ETag of a body: the first 27 characters of its SHA-256 in base64url, quoted. */
export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/**
 * A generated text answer that proxies and crawlers may keep (decisions G20): a strong ETag of
 * the bytes, `Cache-Control`, and 304 without a body when `If-None-Match` names the current
 * version (or `*`). `cache` is a max-age in seconds for shared caches, or a whole Cache-Control
 * value (`private, no-cache` for answers that depend on a token).
 */
export function sendCacheable(
  request: FastifyRequest,
  reply: FastifyReply,
  output: string | { body: string | Buffer; etag: string },
  contentType: string,
  cache: number | string = 300,
) {
  const body = typeof output === 'string' ? output : output.body;
  const etag = typeof output === 'string' ? etagOf(body) : output.etag;
  reply
    .header('etag', etag)
    .header('cache-control', typeof cache === 'number' ? `public, max-age=${cache}` : cache)
    .header('content-type', contentType);
  const given = request.headers['if-none-match'];
  if (given && (given.trim() === '*' || given.split(',').some((t) => t.trim().replace(/^W\//, '') === etag))) return reply.code(304).send();
  return reply.send(body);
}
