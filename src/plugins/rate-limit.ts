import { createRequire } from 'node:module';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError } from '../shared/errors.js';
import { bearerToken } from './auth.js';
import type { Executor } from '../db/types.js';
import { verifiedBefore, verifyCachedToken, verifyToken } from '../modules/api-tokens/api-tokens.auth.js';

// @fastify/rate-limit's Redis store (not exported from its index): one Lua script counts and
// sets the window's expiry atomically, so several instances share one count.
const requireCjs = createRequire(import.meta.url);
type Counted = { current: number; ttl: number };
type IncrCallback = (err: Error | null, result: Counted | null) => void;
interface CounterStore {
  incr(key: string, cb: IncrCallback, timeWindow: number, max: number): void;
}
const RedisStore = requireCjs('@fastify/rate-limit/store/RedisStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  prefix: string,
) => CounterStore;

/** One key's count in its window, updated in place. */
interface Counter {
  current: number;
  resetAt: number;
}

/**
 * Counters in this process: fixed windows, one mutable record per key, so a request of a known
 * key allocates nothing (issue 37). At most `maxKeys` keys: past that, the expired go first,
 * then the oldest.
 */
class MemoryCounters {
  private readonly counters = new Map<string, Counter>();
  constructor(private readonly maxKeys = 10_000) {}

  incr(key: string, windowMs: number, now: number): Counter {
    let counter = this.counters.get(key);
    if (!counter) {
      if (this.counters.size >= this.maxKeys) this.evict(now);
      counter = { current: 0, resetAt: now + windowMs };
      this.counters.set(key, counter);
    } else if (counter.resetAt <= now) {
      counter.current = 0;
      counter.resetAt = now + windowMs;
    }
    counter.current++;
    return counter;
  }

  private evict(now: number): void {
    for (const [key, counter] of this.counters) if (counter.resetAt <= now) this.counters.delete(key);
    if (this.counters.size >= this.maxKeys) this.counters.delete(this.counters.keys().next().value!);
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
 * the offline queue off, commands fail at once while it is away). Records each switch in
 * `state`, logged once.
 */
function storeSwitch(redis: Redis, breaker: RedisBreaker, log: () => FastifyBaseLogger, state: RateLimitState) {
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
  return switchTo;
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

/** A route's budget: the global one, or its own (`config.rateLimit`, counted apart from the others). */
interface Budget {
  /** Per window, for requests counted by token and by address. */
  tokenMax: number;
  addressMax: number;
  windowMs: number;
  /** In memory, by token id and by address apart, so a request's key is the id or address itself (no string built per request). */
  tokens: MemoryCounters;
  addresses: MemoryCounters;
  redis: CounterStore | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A budget of this route's own, counted apart from the global one (the analytics collector). */
    rateLimit?: { max: number; timeWindow: number };
  }
}

/** Requests never counted: the health check, and media files (a page embeds them by the dozen, usually through a CDN). */
const uncounted = (url: string) => url === '/health' || url.startsWith('/files/');

/**
 * Rate limiting (decisions G11, H21): per token on the API, per client address on public
 * endpoints and for every request whose token does not verify: a made-up, unknown, revoked or
 * expired token counts against its address, never against a fresh bucket of its own. The limiter
 * runs before the route (401s carry the headers too). It verifies the token (from the token
 * cache when it can, without a promise) and hands the outcome to the auth hook
 * (request.verifiedToken), so a request verifies its token once; an address that has used up
 * its budget on bad tokens has its token ids never verified here looked up one at a time.
 * In memory, a counted request allocates nothing once its key is known (issue 37).
 */
export async function registerRateLimit(app: FastifyInstance, config: Config, db: Executor, checkChanges: () => void = () => undefined) {
  const failures = new FailedAuthentications(config.rateLimit.publicMax, config.rateLimit.windowMs);
  const state: RateLimitState = { store: config.redisUrl ? 'redis' : 'memory', redis: config.redisUrl ? 'ok' : 'not configured' };
  const log = () => app.log;
  const redis = config.redisUrl ? connectRedis(config.redisUrl, log) : null;
  const breaker = redis ? new RedisBreaker(redis) : null;
  // Several instances share counters only through Redis: an instance that starts serving before
  // its connection is up would count its first requests in memory, on its own. Start-up waits
  // for it briefly (connectTimeout); a Redis that is down still never stops the start.
  if (redis) await readyOrTimeout(redis, 1500);
  const switchTo = redis && breaker ? storeSwitch(redis, breaker, log, state) : null;
  const budget = (prefix: string, own?: { max: number; timeWindow: number }): Budget => ({
    tokenMax: own?.max ?? config.rateLimit.max,
    addressMax: own?.max ?? config.rateLimit.publicMax,
    windowMs: own?.timeWindow ?? config.rateLimit.windowMs,
    tokens: new MemoryCounters(),
    addresses: new MemoryCounters(),
    redis: redis && new RedisStore(false, false, redis, prefix),
  });
  const global = budget('cairn-rl:');
  app.decorateRequest('verifiedToken', null);

  /** Counted against `key`: the headers, then on or a 429. */
  const answer = (reply: FastifyReply, done: HookHandlerDoneFunction, max: number, current: number, ttlMs: number) => {
    const resetSeconds = Math.max(0, Math.ceil(ttlMs / 1000));
    reply.header('ratelimit-limit', max);
    reply.header('ratelimit-remaining', current > max ? 0 : max - current);
    reply.header('ratelimit-reset', resetSeconds);
    if (current <= max) return done();
    reply.header('retry-after', resetSeconds);
    done(new AppError('RATE_LIMITED', { message: `Rate limit of ${max} requests exceeded; retry in ${resetSeconds} s.` }));
  };
  const inMemory = (b: Budget, id: string, byToken: boolean, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const now = Date.now();
    const counter = (byToken ? b.tokens : b.addresses).incr(id, b.windowMs, now);
    answer(reply, done, byToken ? b.tokenMax : b.addressMax, counter.current, counter.resetAt - now);
  };
  /** Counts a request against a token id (`byToken`) or an address. */
  const count = (b: Budget, id: string, byToken: boolean, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (!b.redis || !switchTo) return inMemory(b, id, byToken, reply, done);
    if (redis!.status !== 'ready' || breaker!.open) {
      switchTo('memory', breaker!.open ? 'redis did not answer in time' : `redis connection ${redis!.status}`);
      return inMemory(b, id, byToken, reply, done);
    }
    const max = byToken ? b.tokenMax : b.addressMax;
    b.redis.incr(
      byToken ? `t:${id}` : `ip:${id}`,
      (err, result) => {
        if (err || !result) {
          breaker!.trip();
          switchTo('memory', err?.message);
          return inMemory(b, id, byToken, reply, done);
        }
        switchTo('redis');
        answer(reply, done, max, result.current, result.ttl);
      },
      b.windowMs,
      max,
    );
  };
  /** The token's outcome, kept for the auth hook, and the key it is counted by. */
  const settle = (request: FastifyRequest, outcome: Awaited<ReturnType<typeof verifyToken>> | AppError): string | null => {
    request.verifiedToken = outcome;
    if (outcome instanceof AppError) {
      failures.add(request.ip);
      return null;
    }
    return outcome.tokenId;
  };
  /** The last look-up queued for each address over its failure budget. */
  const queuedLookUps = new Map<string, Promise<unknown>>();
  /** A route's limiter; `publicRoute` read once when the route is added (`request.routeOptions` builds a new object on every read). */
  const limiter = (b: Budget, publicRoute: boolean) =>
    function rateLimit(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      const raw = publicRoute ? null : bearerToken(request.headers.authorization);
      if (!raw) return count(b, request.ip, false, reply, done);
      const cached = verifyCachedToken(db, raw, checkChanges);
      if (cached !== null) {
        const tokenId = settle(request, cached);
        return tokenId ? count(b, tokenId, true, reply, done) : count(b, request.ip, false, reply, done);
      }
      const lookUp = () =>
        verifyToken(db, raw, checkChanges).then(
          (token) => count(b, settle(request, token)!, true, reply, done),
          (err: Error) => {
            // An invalid token counts against its address; a database fault goes on to the errors plugin (503).
            if (!(err instanceof AppError)) return done(err);
            settle(request, err);
            count(b, request.ip, false, reply, done);
          },
        );
      if (!failures.exceeded(request.ip) || verifiedBefore(raw)) return void lookUp();
      // An address that has used up its failures on ids never verified here still gets a valid
      // token verified (issue 36 item 8), but one look-up at a time: its flood costs the database
      // one primary-key read in flight, never a burst, and each made-up token still counts
      // against the address.
      const ip = request.ip;
      const run = (queuedLookUps.get(ip) ?? Promise.resolve()).then(lookUp);
      queuedLookUps.set(ip, run);
      void run.then(() => {
        if (queuedLookUps.get(ip) === run) queuedLookUps.delete(ip);
      });
    };
  const globalLimiter = limiter(global, false);
  const globalPublicLimiter = limiter(global, true);

  // Each route gets its limiter when it is added: none on the routes never counted.
  app.addHook('onRoute', (route: RouteOptions) => {
    if (uncounted(route.url)) return;
    const own = route.config?.rateLimit;
    const methods = Array.isArray(route.method) ? route.method.join('') : route.method;
    const publicRoute = route.config?.scope === 'public';
    const hook = own ? limiter(budget(`cairn-rl:${methods}${route.url}-`, own), publicRoute) : publicRoute ? globalPublicLimiter : globalLimiter;
    route.onRequest = [
      hook,
      ...(route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]),
    ] as RouteOptions['onRequest'];
  });
  return {
    /** The global limiter as a hook of its own, for the not-found handler (no route, so no onRoute). */
    hook: function rateLimitUnknownRoute(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      if (uncounted(request.url)) return done();
      globalLimiter(request, reply, done);
    },
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
