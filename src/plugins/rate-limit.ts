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

/** How often an open breaker asks Redis (PING) whether it answers again. */
const PROBE_INTERVAL_MS = 1000;

/**
 * Whether requests may ask Redis now. A hung Redis (a stopped process, a black-holed network)
 * keeps its connection `ready` and answers nothing: each command costs the full command timeout.
 * So the first failure opens the breaker, and no request asks Redis again until a background
 * PING, once a second whether or not requests come, is answered (decisions HN2).
 */
class RedisBreaker {
  private probe: NodeJS.Timeout | null = null;
  private probing = false;
  /** Called when a probe is answered (the store switches back to Redis). */
  onClosed: () => void = () => undefined;

  constructor(private readonly redis: Redis) {}

  get open(): boolean {
    return this.probe !== null;
  }

  trip(): void {
    if (this.probe) return;
    this.probe = setInterval(() => void this.ask(), PROBE_INTERVAL_MS);
    this.probe.unref();
  }

  private async ask(): Promise<void> {
    // One PING at a time: a hung Redis must not collect a queue of them.
    if (this.probing || this.redis.status !== 'ready') return;
    this.probing = true;
    try {
      await this.redis.ping();
      this.stop();
      this.onClosed();
    } catch {
      // Still away: ask again at the next interval.
    } finally {
      this.probing = false;
    }
  }

  stop(): void {
    if (this.probe) clearInterval(this.probe);
    this.probe = null;
  }
}

/**
 * Counters in Redis while it answers, in this process while it does not (decisions H21, HN2): a
 * dead or hung Redis costs one request at most the command timeout, then nothing until Redis is
 * back (ioredis reconnects a dropped connection on its own, the breaker probes a hung one; with
 * the offline queue off, commands fail at once while it is away). Each switch is logged once.
 */
function fallbackStoreClass(redis: Redis, breaker: RedisBreaker, log: () => FastifyBaseLogger, state: RateLimitState) {
  let everReady = false;
  let warned = false;
  redis.once('ready', () => (everReady = true));
  const switchTo = (store: RateLimitState['store'], reason?: string): void => {
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
  };
  // The breaker's probe found Redis answering: /health says so before any request comes.
  breaker.onClosed = () => switchTo('redis');

  return class FallbackStore implements CounterStore {
    private readonly redisStore: CounterStore;
    private readonly localStore: CounterStore;

    constructor(params: { continueExceeding?: boolean; exponentialBackoff?: boolean }, stores?: { redisStore: CounterStore; localStore: CounterStore }) {
      this.redisStore = stores?.redisStore ?? new RedisStore(!!params.continueExceeding, !!params.exponentialBackoff, redis, 'cairn-rl:');
      this.localStore = stores?.localStore ?? new MemoryStore(params);
    }

    incr(key: string, cb: IncrCallback, timeWindow: number, max: number): void {
      if (redis.status !== 'ready' || breaker.open) {
        switchTo('memory', breaker.open ? 'redis did not answer in time' : `redis connection ${redis.status}`);
        this.localStore.incr(key, cb, timeWindow, max);
        return;
      }
      this.redisStore.incr(
        key,
        (err, result) => {
          if (!err) {
            switchTo('redis');
            return cb(null, result);
          }
          breaker.trip();
          switchTo('memory', err.message);
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
 * its budget on bad tokens, its next made-up tokens cost no database lookup (the 429 comes from
 * its address bucket in the store, which every failure was counted against).
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
  const verifiedTokenId = async (raw: string, ip: string): Promise<string | null> => {
    const known = knownTokenId(raw);
    if (known || failures.exceeded(ip)) return known;
    // An invalid token is an AppError (401); a database fault goes on to the errors plugin (503).
    const token = await verifyToken(db, raw).catch((err) => {
      if (err instanceof AppError) return null;
      throw err;
    });
    if (!token) failures.add(ip);
    return token?.tokenId ?? null;
  };
  const state: RateLimitState = { store: config.redisUrl ? 'redis' : 'memory', redis: config.redisUrl ? 'ok' : 'not configured' };
  const log = () => app.log;
  const redis = config.redisUrl ? connectRedis(config.redisUrl, log) : null;
  const breaker = redis ? new RedisBreaker(redis) : null;
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
    store: (redis && breaker ? fallbackStoreClass(redis, breaker, log, state) : MemoryStore) as never,
    skipOnError: true,
    // Media files are what a page embeds by the dozen, usually through a CDN: not counted.
    allowList: (req: FastifyRequest) => req.url === '/health' || req.url.startsWith('/files/'),
    errorResponseBuilder: (_req, context) =>
      new AppError('RATE_LIMITED', { message: `Rate limit of ${context.max} requests exceeded; retry in ${context.after}.` }),
  });
  return {
    state: (): RateLimitState => ({
      ...state,
      ...(redis && (redis.status !== 'ready' || breaker?.open) ? { store: 'memory', redis: 'unreachable' } : {}),
    }),
    close: async () => {
      breaker?.stop();
      if (!redis) return;
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
