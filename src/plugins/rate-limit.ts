import { createRequire } from 'node:module';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError } from '../shared/errors.js';
import { bearerToken } from './auth.js';
import type { Executor } from '../db/types.js';
import { knownTokenId, verifyToken } from '../modules/api-tokens/api-tokens.auth.js';

// The plugin's own stores (not exported from its index): Redis's Lua counter and the in-process LRU.
const requireCjs = createRequire(import.meta.url);
type StoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean, ...rest: unknown[]) => CounterStore;
const RedisStore = requireCjs('@fastify/rate-limit/store/RedisStore.js') as StoreClass;
const LocalStore = requireCjs('@fastify/rate-limit/store/LocalStore.js') as StoreClass;

type Counted = { current: number; ttl: number };
type IncrCallback = (err: Error | null, result: Counted | null) => void;
interface CounterStore {
  incr(key: string, cb: IncrCallback, timeWindow: number, max: number): void;
  child(routeOptions: unknown): CounterStore;
}

/**
 * The plugin's in-process store answers with its live counter object, which the plugin reads only
 * after an await: in a burst of concurrent requests from one address, every request then saw the
 * burst's final count, and all of them were refused, the first ones too. This one answers with a
 * copy of the count at the moment each request was counted.
 */
class MemoryStore implements CounterStore {
  private readonly inner: CounterStore;
  constructor(params: { continueExceeding?: boolean; exponentialBackoff?: boolean }, inner?: CounterStore) {
    this.inner = inner ?? new LocalStore(!!params.continueExceeding, !!params.exponentialBackoff, 10_000);
  }

  incr(key: string, cb: IncrCallback, timeWindow: number, max: number): void {
    this.inner.incr(key, (err, result) => cb(err, result && { current: result.current, ttl: result.ttl }), timeWindow, max);
  }

  child(routeOptions: unknown): CounterStore {
    return new MemoryStore({}, this.inner.child(routeOptions));
  }
}

/** Where the counters live right now, for /health and the log. */
export interface RateLimitState {
  store: 'redis' | 'memory';
  /** 'not configured' without REDIS_URL. */
  redis: 'ok' | 'unreachable' | 'not configured';
}

/**
 * Counters in Redis while it answers, in this process while it does not (decisions H21): a dead
 * or hung Redis costs a request at most the command timeout once, then nothing until Redis is
 * back (ioredis reconnects on its own; with the offline queue off, commands fail at once while
 * it is away). Each switch is logged once.
 */
function fallbackStoreClass(redis: Redis, log: () => FastifyBaseLogger, state: RateLimitState) {
  let everReady = false;
  let warned = false;
  redis.once('ready', () => (everReady = true));
  return class FallbackStore implements CounterStore {
    private readonly redisStore: CounterStore;
    private readonly localStore: CounterStore;

    constructor(params: { continueExceeding?: boolean; exponentialBackoff?: boolean }, stores?: { redisStore: CounterStore; localStore: CounterStore }) {
      this.redisStore = stores?.redisStore ?? new RedisStore(!!params.continueExceeding, !!params.exponentialBackoff, redis, 'cairn-rl:');
      this.localStore = stores?.localStore ?? new MemoryStore(params);
    }

    private switchTo(store: RateLimitState['store'], reason?: string): void {
      if (state.store === store) return;
      state.store = store;
      state.redis = store === 'redis' ? 'ok' : 'unreachable';
      // The first connection after start-up is not an outage worth a warning (nor its end a recovery).
      const starting = !everReady && ['wait', 'connecting', 'connect'].includes(redis.status);
      if (store === 'memory' && !starting) {
        warned = true;
        log().warn({ reason }, 'redis unreachable: rate limiting counts in this process until it is back');
      } else if (store === 'redis' && warned) {
        warned = false;
        log().info('redis is back: rate limiting counts in redis again');
      }
    }

    incr(key: string, cb: IncrCallback, timeWindow: number, max: number): void {
      if (redis.status !== 'ready') {
        this.switchTo('memory', `redis connection ${redis.status}`);
        this.localStore.incr(key, cb, timeWindow, max);
        return;
      }
      this.redisStore.incr(
        key,
        (err, result) => {
          if (!err) {
            this.switchTo('redis');
            return cb(null, result);
          }
          this.switchTo('memory', err.message);
          this.localStore.incr(key, cb, timeWindow, max);
        },
        timeWindow,
        max,
      );
    }

    child(routeOptions: unknown): CounterStore {
      return new FallbackStore({}, { redisStore: this.redisStore.child(routeOptions), localStore: this.localStore.child(routeOptions) });
    }
  };
}

/** Redis for shared counters: fail fast, never queue, reconnect in the background. */
function connectRedis(url: string, log: () => FastifyBaseLogger): Redis {
  // ioredis is loaded only when REDIS_URL is set: a process without Redis does not carry it.
  const { Redis: RedisClient } = requireCjs('ioredis') as typeof import('ioredis');
  const redis = new RedisClient(url, {
    connectTimeout: 1000,
    commandTimeout: 250,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(100 * 2 ** times, 2000),
    lazyConnect: false,
  });
  // Connection errors repeat every retry; the store logs the switch to memory once instead.
  redis.on('error', (err) => log().debug({ err: { message: err.message } }, 'redis error'));
  return redis;
}

/** Resolves when the client is ready, or after `ms` (then the store falls back to memory until it is). */
function readyOrTimeout(redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/**
 * Failed authentications per client address in this process, so that once an address has used up
 * its budget on bad tokens, its next tokens are looked up one at a time (the 429 comes from its
 * address bucket in the store, which every failure was counted against).
 */
class FailedAuthentications {
  private readonly counts = new Map<string, { n: number; until: number }>();
  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}
  exceeded(ip: string): boolean {
    const c = this.counts.get(ip);
    return !!c && c.until > Date.now() && c.n >= this.max;
  }
  add(ip: string): void {
    const now = Date.now();
    const c = this.counts.get(ip);
    if (c && c.until > now) c.n++;
    else {
      if (this.counts.size >= 10_000) this.counts.clear();
      this.counts.set(ip, { n: 1, until: now + this.windowMs });
    }
  }
}

/**
 * Rate limiting (decisions G11, H21): per token on the API, per client address on public
 * endpoints and for every request whose token does not verify: a made-up, unknown, revoked or
 * expired token counts against its address, never against a fresh bucket of its own. The limiter
 * runs before the route (401s carry the headers too); it verifies a token it has not seen (the
 * row is then cached for the auth hook), and a token verified here costs no lookup at all.
 */
export async function registerRateLimit(app: FastifyInstance, config: Config, db: Executor) {
  const failures = new FailedAuthentications(config.rateLimit.publicMax, config.rateLimit.windowMs);
  const lookUp = async (raw: string, ip: string): Promise<string | null> => {
    // An invalid token is an AppError (401); a database fault goes on to the errors plugin (503).
    const token = await verifyToken(db, raw).catch((err) => {
      if (err instanceof AppError) return null;
      throw err;
    });
    if (!token) failures.add(ip);
    return token?.tokenId ?? null;
  };
  /** The last look-up queued for each address over its failure budget. */
  const queued = new Map<string, Promise<unknown>>();
  const verifiedTokenId = async (raw: string, ip: string): Promise<string | null> => {
    const known = knownTokenId(raw);
    if (known) return known;
    if (!failures.exceeded(ip)) return lookUp(raw, ip);
    // An address flooding bad tokens still gets its valid token verified (issue 36 item 8), but
    // one look-up at a time: the flood costs the database one primary-key read in flight, never a
    // burst, and each made-up token still counts against the address.
    const run = (queued.get(ip) ?? Promise.resolve()).then(() => lookUp(raw, ip));
    const settled = run.catch(() => undefined);
    queued.set(ip, settled);
    void settled.then(() => {
      if (queued.get(ip) === settled) queued.delete(ip);
    });
    return run;
  };
  const state: RateLimitState = { store: config.redisUrl ? 'redis' : 'memory', redis: config.redisUrl ? 'ok' : 'not configured' };
  const log = () => app.log;
  const redis = config.redisUrl ? connectRedis(config.redisUrl, log) : null;
  // Several instances share counters only through Redis: an instance that starts serving before
  // its connection is up would count its first requests in memory, on its own. Start-up waits
  // for it briefly (connectTimeout); a Redis that is down still never stops the start.
  if (redis) await readyOrTimeout(redis, 1500);

  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    timeWindow: config.rateLimit.windowMs,
    max: (_req: FastifyRequest, key: string) => (key.startsWith('t:') ? config.rateLimit.max : config.rateLimit.publicMax),
    keyGenerator: async (req: FastifyRequest) => {
      const isPublic = req.routeOptions.config?.scope === 'public';
      const raw = isPublic ? null : bearerToken(req.headers.authorization);
      const tokenId = raw ? await verifiedTokenId(raw, req.ip) : null;
      return tokenId ? `t:${tokenId}` : `ip:${req.ip}`;
    },
    enableDraftSpec: true,
    addHeadersOnExceeding: { 'ratelimit-limit': true, 'ratelimit-remaining': true, 'ratelimit-reset': true },
    addHeaders: { 'ratelimit-limit': true, 'ratelimit-remaining': true, 'ratelimit-reset': true, 'retry-after': true },
    store: (redis ? fallbackStoreClass(redis, log, state) : MemoryStore) as never,
    skipOnError: true,
    // Media files are what a page embeds by the dozen, usually through a CDN: not counted.
    allowList: (req: FastifyRequest) => req.url === '/health' || req.url.startsWith('/files/'),
    errorResponseBuilder: (_req, context) =>
      new AppError('RATE_LIMITED', { message: `Rate limit of ${context.max} requests exceeded; retry in ${context.after}.` }),
  });
  return {
    state: (): RateLimitState => ({ ...state, ...(redis && redis.status !== 'ready' ? { store: 'memory', redis: 'unreachable' } : {}) }),
    close: async () => {
      if (!redis) return;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
