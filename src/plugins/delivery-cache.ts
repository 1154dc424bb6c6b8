import type { FastifyInstance, FastifyRequest, onRequestHookHandler, onSendHookHandler, RouteOptions } from 'fastify';
import { etagOf, matchesEtag } from '../shared/http-cache.js';
import { isDeliveryScope, type RouteScope } from '../shared/scopes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the delivery cache on a miss: where the answer goes, and the site's generation when the read began. */
    deliveryCacheMiss?: { key: string; siteId: string; stamp: number };
  }
  interface FastifyContextConfig {
    /**
     * Whether the delivery cache may answer this GET route (decisions P18). Token routes: on by
     * default for the delivery scopes (the answers of delivery tokens); `false` for a route whose
     * answer depends on more than the site and the URL (request headers, the time) or whose read
     * writes (hit counters). Site-key routes: off unless `true`.
     */
    deliveryCache?: boolean;
    /** A write that changes nothing a cached read answers (a consent record): its site's cached answers stay. */
    keepsDeliveryCache?: boolean;
  }
}

interface Entry {
  siteId: string;
  stamp: number;
  body: Buffer;
  etag: string;
  headers: Array<[string, string]>;
}

/** The answer headers kept with a cached body; the others (request id, CORS, rate limit) are the request's own. */
const KEPT_HEADERS = ['content-type', 'cache-control', 'content-language'];

/**
 * Published reads answered from memory (issue 15 item 6, decisions P18): the answers of delivery
 * tokens and of the site-key routes that opt in, keyed by site, kind and URL, each stamped with
 * its site's generation when its read began. Any change to a site moves the site's generation
 * on, so its answers are not served again:
 * - a write through this instance's API, when it answers (before the writer's client can read);
 * - a job of the site run by this instance's worker (scheduled publishing);
 * - a commit by another process: PostgreSQL announces the site (the triggers of migration 0024,
 *   at commit); with SQLite another process's commit drops everything, looked for on cached reads (at most once a millisecond).
 * A read that raced a change is not kept (its stamp is older than the generation it finds).
 * At most `maxBytes` are held, least recently used out first.
 */
export class DeliveryCache {
  private readonly entries = new Map<string, Entry>();
  /** When each site last changed, on `clock`. */
  private readonly generations = new Map<string, number>();
  /** When every site last changed at once (another SQLite process committed, a lost PostgreSQL listener). */
  private floor = 0;
  /** Counts changes; only ever grows, so a stamp taken before a change never equals one taken after. */
  private clock = 0;
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(
    private readonly maxBytes: number,
    /** Looks for other processes' commits now (Database.pollChanges). */
    private readonly pollChanges: () => void = () => undefined,
  ) {}

  /** The generation of a site's answers: when it, or every site, last changed. */
  private stampOf(siteId: string): number {
    return Math.max(this.generations.get(siteId) ?? 0, this.floor);
  }

  /** Forgets the answers of one site, or of every site. */
  readonly changed = (siteId?: string): void => {
    this.clock++;
    if (siteId !== undefined) {
      this.generations.set(siteId, this.clock);
      return;
    }
    this.floor = this.clock;
    this.generations.clear();
    this.entries.clear();
    this.bytes = 0;
  };

  /**
   * The site's generation now, after a look for other processes' commits: the one "site changed"
   * signal every cache of site data keys on (decisions S17). It moves on every change to the site
   * seen by this instance, so an answer built under an older one is not served again.
   */
  readonly generationOf = (siteId: string): number => {
    this.pollChanges();
    return this.stampOf(siteId);
  };

  lookup(key: string, siteId: string): Entry | { miss: number } {
    this.pollChanges();
    const entry = this.entries.get(key);
    const stamp = this.stampOf(siteId);
    if (entry && entry.stamp === stamp) {
      this.entries.delete(key);
      this.entries.set(key, entry);
      this.hits++;
      return entry;
    }
    if (entry) this.forget(key);
    this.misses++;
    return { miss: stamp };
  }

  store(key: string, siteId: string, stamp: number, body: Buffer, etag: string, headers: Array<[string, string]>): void {
    if (this.maxBytes <= 0 || body.length > this.maxBytes / 8 || this.stampOf(siteId) !== stamp) return;
    this.forget(key);
    this.entries.set(key, { siteId, stamp, body, etag, headers });
    this.bytes += body.length + key.length;
    while (this.bytes > this.maxBytes && this.entries.size > 0) this.forget(this.entries.keys().next().value!);
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.body.length + key.length;
    this.entries.delete(key);
  }
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether a route's answers may be cached, from its declaration (checked once, when the route is added). */
export function cachesRoute(route: RouteOptions, scope: RouteScope): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!methods.includes('GET')) return false;
  const declared = route.config?.deliveryCache;
  if (scope === 'public') return declared === true && !!route.config?.siteKey;
  if (declared !== undefined) return declared;
  return isDeliveryScope(scope) && !route.config?.managementOnly && !route.config?.deliveryOpen;
}

/** The cache key of a request this route may answer from the cache, or null (a management token, a HEAD). */
function keyOf(request: FastifyRequest): { key: string; siteId: string } | null {
  if (request.method !== 'GET') return null;
  if (request.publicSite) return { key: `${request.publicSite.siteId}\np\n${request.url}`, siteId: request.publicSite.siteId };
  const auth = request.auth;
  // Delivery tokens of a site all see the same thing (published records); a `.own` access depends on the user.
  if (auth?.kind !== 'delivery' || auth.access !== 'all') return null;
  return { key: `${auth.siteId}\nd\n${request.url}`, siteId: auth.siteId };
}

/**
 * The route's lookup (after authentication) and store hooks; callback hooks, so a hit costs no
 * promise: it is answered from the lookup, before anything else of the route runs (issue 37).
 */
export function deliveryCacheHooks(cache: DeliveryCache): { lookup: onRequestHookHandler; store: onSendHookHandler } {
  const lookup: onRequestHookHandler = function deliveryCacheLookup(request, reply, done) {
    const target = keyOf(request);
    if (!target) return done();
    const found = cache.lookup(target.key, target.siteId);
    if ('miss' in found) {
      request.deliveryCacheMiss = { key: target.key, siteId: target.siteId, stamp: found.miss };
      return done();
    }
    for (const [name, value] of found.headers) reply.header(name, value);
    reply.header('etag', found.etag);
    // An answer sent from a callback hook ends the request there (no done()).
    if (matchesEtag(request.headers['if-none-match'], found.etag)) reply.code(304).send();
    else reply.send(found.body);
  };
  const store: onSendHookHandler = function deliveryCacheStore(request, reply, payload, done) {
    const miss = request.deliveryCacheMiss;
    if (!miss || reply.statusCode !== 200 || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) return done(null, payload);
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const etag = (reply.getHeader('etag') as string | undefined) ?? etagOf(body);
    // A token's answer: browsers may keep it but must ask again (304 when unchanged); shared caches may not.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'private, no-cache');
    reply.header('etag', etag);
    const headers: Array<[string, string]> = [];
    for (const name of KEPT_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers.push([name, String(value)]);
    }
    cache.store(miss.key, miss.siteId, miss.stamp, body, etag, headers);
    if (matchesEtag(request.headers['if-none-match'], etag)) {
      reply.code(304);
      return done(null, null);
    }
    done(null, body);
  };
  return { lookup, store };
}

/**
 * The write side, on every write route (added when the route is): a write through the API moves
 * its site's generation on when it answers, after its transaction committed and before its client
 * can send the next read. Reads carry no hook for it.
 */
export function forgetOnWrite(app: FastifyInstance, cache: DeliveryCache): void {
  const forget: onSendHookHandler = function forgetSiteAnswers(request, _reply, payload, done) {
    // A route of several methods (GET and PUT) forgets on its writes only.
    if (!WRITE_METHODS.has(request.method)) return done(null, payload);
    const siteId = request.auth?.siteId ?? request.publicSite?.siteId;
    if (siteId) cache.changed(siteId);
    done(null, payload);
  };
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => WRITE_METHODS.has(m)) || route.config?.keepsDeliveryCache) return;
    const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...own, forget] as RouteOptions['onSend'];
  });
}
