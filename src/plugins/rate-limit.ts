import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError } from '../shared/errors.js';
import { bearerToken } from './auth.js';
import { parseTokenId } from '../modules/api-tokens/api-tokens.service.js';

/**
 * Rate limiting (decisions G11): per token on the API, per client address on public endpoints
 * and for requests without a valid-looking token. The token id is read from the token itself,
 * so the limiter runs before authentication and 401s carry the headers too. Counters live in
 * Redis when REDIS_URL is set (shared by every instance), in memory otherwise.
 */
export async function registerRateLimit(app: FastifyInstance, config: Config): Promise<Redis | null> {
  const redis = config.redisUrl ? new Redis(config.redisUrl, { connectTimeout: 2000, maxRetriesPerRequest: 1, lazyConnect: false }) : null;
  redis?.on('error', (err) => app.log.warn({ err: { message: err.message } }, 'redis error'));

  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: config.rateLimit.windowMs,
    max: (_req: FastifyRequest, key: string) => (key.startsWith('t:') ? config.rateLimit.max : config.rateLimit.publicMax),
    keyGenerator: (req: FastifyRequest) => {
      const isPublic = req.routeOptions.config?.scope === 'public';
      const raw = isPublic ? null : bearerToken(req.headers.authorization);
      const tokenId = raw ? parseTokenId(raw) : null;
      return tokenId ? `t:${tokenId}` : `ip:${req.ip}`;
    },
    enableDraftSpec: true,
    addHeadersOnExceeding: { 'ratelimit-limit': true, 'ratelimit-remaining': true, 'ratelimit-reset': true },
    addHeaders: { 'ratelimit-limit': true, 'ratelimit-remaining': true, 'ratelimit-reset': true, 'retry-after': true },
    redis: redis ?? undefined,
    nameSpace: 'cairn-rl:',
    skipOnError: true,
    allowList: (req: FastifyRequest) => req.url === '/health',
    errorResponseBuilder: (_req, context) =>
      new AppError('RATE_LIMITED', { message: `Rate limit of ${context.max} requests exceeded; retry in ${context.after}.` }),
  });
  return redis;
}
