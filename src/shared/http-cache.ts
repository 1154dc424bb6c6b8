import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A strong ETag of a body: the first 27 characters of its SHA-256 in base64url, quoted. */
export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

const opaque = (tag: string) => tag.trim().replace(/^W\//, '');

/**
 * Whether an `If-None-Match` value names this ETag, the one rule of every cacheable route
 * (decisions S16): `*` names any current version, and tags compare weakly (RFC 9110 13.1.2), so
 * `W/"x"` and `"x"` are the same version whichever side is weak.
 */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const wanted = opaque(etag);
  return ifNoneMatch.split(',').some((t) => opaque(t) === wanted);
}

/**
 * The conditional-response path of every cacheable route: sets `ETag` and `Cache-Control` and,
 * when the request's `If-None-Match` names this version, the status 304. Answers whether it did;
 * the caller then sends no body (`reply.send()`).
 */
export function notModified(request: FastifyRequest, reply: FastifyReply, etag: string, cacheControl: string): boolean {
  reply.header('etag', etag).header('cache-control', cacheControl);
  if (!matchesEtag(request.headers['if-none-match'], etag)) return false;
  reply.code(304);
  return true;
}

/**
 * A generated text answer that proxies and crawlers may keep (decisions G20): a strong ETag of
 * the bytes, `Cache-Control`, and 304 without a body when `If-None-Match` names the current
 * version. `cache` is a max-age in seconds for shared caches, or a whole Cache-Control value
 * (`private, no-cache` for answers that depend on a token). Always `nosniff`: a browser reads
 * robots.txt, a sitemap, llms.txt or markdown (text a site's editors wrote) as its content type
 * says, never as HTML or script it sniffed (issue 36 item 8).
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
  reply.header('content-type', contentType).header('x-content-type-options', 'nosniff');
  if (notModified(request, reply, etag, typeof cache === 'number' ? `public, max-age=${cache}` : cache)) return reply.send();
  return reply.send(body);
}
