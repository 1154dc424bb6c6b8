import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A generated text answer that proxies and crawlers may keep (decisions G20): a strong ETag of
 * the bytes, `Cache-Control`, and 304 without a body when `If-None-Match` names the current
 * version (or `*`).
 */
export function sendCacheable(request: FastifyRequest, reply: FastifyReply, body: string, contentType: string, maxAgeSeconds = 300) {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  reply.header('etag', etag).header('cache-control', `public, max-age=${maxAgeSeconds}`).header('content-type', contentType);
  const given = request.headers['if-none-match'];
  if (given && (given.trim() === '*' || given.split(',').some((t) => t.trim().replace(/^W\//, '') === etag))) return reply.code(304).send();
  return reply.send(body);
}
