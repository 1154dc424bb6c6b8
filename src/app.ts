import { randomUUID } from 'node:crypto';
import http from 'node:http';
import querystring from 'node:querystring';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import multipart, { type FastifyMultipartOptions } from '@fastify/multipart';
import { sql } from 'kysely';
import type { Config } from './config.js';
import { connectDatabase, waitUntilReachable, type Database } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { answerClientError, notFoundHandler, registerErrorHandling, toErrorBody } from './plugins/errors.js';
import { registerJsonParser, registerUrlTextCheck } from './plugins/json-body.js';
import { heavyPauseMs, noteArrival } from './shared/time-slice.js';
import { registerRouteGuard, type RouteInfo } from './plugins/routes.js';
import { registerRateLimit } from './plugins/rate-limit.js';
import { limitConnectionsPerAddress } from './plugins/connections.js';
import { lazyRequestLogger } from './plugins/request-logger.js';
import { DOCS_PREFIX, registerOpenApi } from './plugins/openapi.js';
import { buildValidator } from './plugins/validation.js';
import { buildSerializer } from './plugins/serialization.js';
import { ErrorBodySchema, namedSchemas } from './shared/schemas.js';
import { KEY_FILE, loadSecretBox } from './shared/secrets.js';
import { ChangeFeed } from './shared/changes.js';
import { describedEvents, MODULES } from './modules/index.js';
import type { AnyModule, App, ModuleDeps } from './modules/types.js';
import { Worker } from './jobs/worker.js';
import { DeliveryCache, forgetOnWrite } from './plugins/delivery-cache.js';
import { createMailer } from './shared/mailer.js';
import { type FileStorage, openStorage } from './shared/storage.js';
import { registerRetention, retentionTask } from './jobs/retention.js';
import { requestScoped, unscoped } from './db/request-transaction.js';
import { IDEMPOTENCY_WINDOW_MS, registerIdempotency } from './plugins/idempotency.js';
import { deleteExpiredKeys } from './plugins/idempotency.repository.js';
import { forgetTokens } from './modules/api-tokens/api-tokens.auth.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

declare module 'fastify' {
  interface FastifyInstance {
    /** Every /v1 route with its scope: the OpenAPI document and the contract tests read it. */
    routeTable: RouteInfo[];
    /** The in-process worker; tests drive it with worker.runDueJobs() / worker.tick(). */
    worker: Worker;
    /** Published reads answered from memory (decisions P18). */
    deliveryCache: DeliveryCache;
    /** Where files live (local disk or S3); tests list it to prove a failed request left nothing. */
    storage: FileStorage;
  }
  interface FastifyContextConfig {
    /**
     * The route's work waits on the SQLite reader thread (a full-text search): its arrivals are
     * not other work the thread yields to (decisions HN20).
     */
    waitsOnReaderThread?: boolean;
  }
}

export interface CreateAppOptions {
  /** Use this database instead of opening one from the config (tests share nothing else). */
  database?: Database;
  /** Extra modules after the standard ones (tests use it to prove the scope guard). */
  extraModules?: AnyModule[];
  logger?: FastifyServerOptions['logger'];
  migrate?: boolean;
}

/** `?ids[]=1&ids[]=2` and `?ids=1&ids=2` both become `ids: ['1','2']` (decisions G7 array filters). */
function parseQuery(raw: string): Record<string, unknown> {
  // Most reads have no query string: nothing to parse.
  if (raw === '') return {};
  const parsed = querystring.parse(raw);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (key.endsWith('[]')) {
      const name = key.slice(0, -2);
      const prev = out[name];
      const list = Array.isArray(value) ? value : [value];
      out[name] = prev === undefined ? list : [...(Array.isArray(prev) ? prev : [prev]), ...list];
    } else if (out[key] !== undefined) {
      out[key] = [...(Array.isArray(out[key]) ? (out[key] as unknown[]) : [out[key]]), ...(Array.isArray(value) ? value : [value])];
    } else out[key] = value;
  }
  return out;
}

const ANALYTICS_PUBLIC_PREFIX = '/v1/public/analytics/';

/** Query parameters that carry credentials: never written to a log (tokens belong in the Authorization header). */
const SECRET_QUERY = /([?&](?:access_token|token|api_key|apikey|key|secret|password)=)[^&#]*/gi;
/**
 * An API token wherever it stands in a URL, under any parameter name or as a path segment
 * (`cairn_<id>_<secret>`, decisions P1; its underscore may come percent-encoded): redacted whole.
 */
const TOKEN_IN_URL = /cairn(?:_|%5f)[0-9a-f]{32}(?:_|%5f)[A-Za-z0-9_%-]{43,}/gi;

/** A URL as it may be logged: no token, no credential parameter. */
function redactUrl(url: string): string {
  return url.replace(TOKEN_IN_URL, '[redacted]').replace(SECRET_QUERY, '$1[redacted]');
}

/** The request as logged: Fastify's fields, with credentials in the query string redacted. */
function serializeRequest(req: { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number } }) {
  // The analytics collector's visitors are never logged by address, nor by port (decisions A4).
  const anonymous = req.url.startsWith(ANALYTICS_PUBLIC_PREFIX);
  return {
    method: req.method,
    url: redactUrl(req.url),
    host: req.host,
    remoteAddress: anonymous ? undefined : req.ip,
    remotePort: anonymous ? undefined : req.socket?.remotePort,
  };
}

/**
 * @fastify/multipart without its onRequest and onResponse hooks, which run on every request of
 * every route to delete the temporary files of its disk mode (`saveRequestFiles`): Cairn reads
 * multipart bodies as streams only (decisions G21), so on every request they had nothing to do
 * but cost a promise and a listener each (issue 37, decisions PF2). The plugin shares its parent's
 * instance (fastify-plugin), so its hooks go through this instance's addHook while it registers.
 */
async function registerMultipart(app: FastifyInstance, options: FastifyMultipartOptions): Promise<void> {
  const addHook = app.addHook;
  const skipped = new Set(['onRequest', 'onResponse']);
  app.addHook = function (this: FastifyInstance, name: string, ...rest: unknown[]) {
    return skipped.has(name) ? this : (addHook as (...args: unknown[]) => FastifyInstance).call(this, name, ...rest);
  } as typeof app.addHook;
  try {
    await app.register(multipart, options);
  } finally {
    app.addHook = addHook;
  }
}

/** The app as a plugin tree in a fixed order: errors, route guard, rate limit, docs, modules. */
export async function createApp(config: Config, options: CreateAppOptions = {}): Promise<App & { database: Database }> {
  // A logger given by the caller (tests: a level and a stream) keeps the redaction rules.
  const logger =
    options.logger === false
      ? false
      : {
          level: config.logLevel,
          redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.token', '*.secret'], censor: '[redacted]' },
          serializers: { req: serializeRequest },
          ...(typeof options.logger === 'object' ? options.logger : {}),
        };
  const app = Fastify({
    logger,
    ...(logger ? { childLoggerFactory: lazyRequestLogger } : {}),
    bodyLimit: config.bodyLimit,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
    },
    // Slugs are up to 500 characters, percent-encoded up to three times as long.
    routerOptions: { querystringParser: parseQuery, ignoreTrailingSlash: true, maxParamLength: 2048 },
    // Errors the router raises before any route runs (bad URL, overlong parameter) get the one error body too.
    frameworkErrors: (error, _request, reply) => {
      const out = toErrorBody(error as never);
      void (reply as unknown as FastifyReply).code(out.statusCode).send(out);
    },
    return503OnClosing: true,
    // Oversized headers (431), timeouts (408) and garbage (400) answer the one error body too.
    clientErrorHandler: answerClientError,
    // Slow clients (headers or a body trickled a byte at a time) are cut off: Node checks the
    // request and header deadlines every second here instead of its default 30 s. One address
    // holds at most its share of the connections (decisions HN4).
    serverFactory: (handler) => {
      const server = http.createServer(
        {
          requestTimeout: config.http.requestTimeoutMs,
          headersTimeout: config.http.headersTimeoutMs,
          keepAliveTimeout: config.http.keepAliveTimeoutMs,
          connectionsCheckingInterval: Math.min(1000, config.http.headersTimeoutMs),
        },
        handler,
      );
      server.maxConnections = config.http.maxConnections;
      limitConnectionsPerAddress(server, config.http.maxConnectionsPerAddress);
      return server;
    },
    schemaController: { compilersFactory: { buildValidator: buildValidator as never, buildSerializer: buildSerializer as never } },
    forceCloseConnections: 'idle',
    // Off by default: behind no proxy a forwarded header is whatever the client wrote (decisions A4).
    // (Typed as boolean only to keep Fastify's HTTP/1 overload; a hop count or an address list passes through.)
    trustProxy: config.trustProxy as FastifyServerOptions['trustProxy'] & boolean,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const modules = [...MODULES, ...(options.extraModules ?? [])];
  const events = describedEvents(modules);
  const { box: secrets, source: keySource } = loadSecretBox(config.secrets, config.dataDir);
  if (keySource === 'file') {
    app.log.info(
      { keyId: secrets.keyId },
      `secrets are encrypted with the key in ${path.join(config.dataDir, KEY_FILE)}; set CAIRN_SECRET_KEY when several instances share one database`,
    );
  }
  const database =
    options.database ??
    connectDatabase({
      databaseUrl: config.databaseUrl,
      pgSchema: config.pgSchema,
      sqliteBusyTimeoutMs: config.database.busyTimeoutMs,
      sqliteCheckpointIntervalMs: config.database.checkpointIntervalMs,
      sqliteOptimizeIntervalMs: config.database.optimizeIntervalMs,
      sqliteOffLoopPause: heavyPauseMs,
      onPoolError: (err) => app.log.warn({ err: { message: err.message } }, 'database pool error'),
    });
  await waitUntilReachable(database, config.database.connectTimeoutMs, (err, delayMs) =>
    app.log.warn({ err: { message: err.message }, retryInMs: delayMs }, 'database unreachable at start-up; retrying'),
  ).catch(async (err) => {
    if (!options.database) await database.close().catch(() => undefined);
    throw err;
  });
  if (options.migrate !== false) await migrateToLatest(database);
  // Every statement of the app, the modules' and the worker's alike, goes through one handle that
  // joins a request's own transaction when the request holds one (an Idempotency-Key, decisions HR4);
  // caches keyed on the handle see one handle.
  database.db = requestScoped(database.db);
  const changes = new ChangeFeed();
  const mailer = createMailer(config.mail, () => app.log);
  const storage = await openStorage(config, app.log);
  // Published reads answered from memory (decisions P18); its site generations are the one
  // "site changed" signal the other caches key on (decisions S17).
  const deliveryCache = new DeliveryCache(config.deliveryCacheBytes, database.pollChanges);
  const deps: ModuleDeps = { db: database.db, config, secrets, changes, mailer, storage, events, siteGeneration: deliveryCache.generationOf };

  const routeTable: RouteInfo[] = [];
  app.decorate('routeTable', routeTable);
  app.decorate('database', database);
  app.decorate('storage', storage);
  app.addSchema(ErrorBodySchema);
  for (const schema of namedSchemas()) app.addSchema(schema);
  registerErrorHandling(app);
  registerJsonParser(app);
  registerUrlTextCheck(app);
  // Multipart bodies are parsed as streams by the routes that take files (decisions G21); one
  // file per request, few small fields, each route sets its own file size limit.
  await registerMultipart(app, { limits: { files: 1, fields: 20, fieldSize: 65_536, parts: 25, fileSize: config.bodyLimit } });
  // Callback hooks, here and below: an async one costs every request a promise and a tick.
  app.addHook('onSend', function requestId(request, reply, payload, done) {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
  // CORS preflight of the public endpoints (decisions G19): a browser asks before sending
  // `X-Site-Key` or a JSON body. The preflight answers every origin; whether the page may read
  // the answer is decided per request by the site's own origins (plugins/auth.ts siteKeyHook).
  app.addHook('onRequest', function corsPreflight(request, reply, done) {
    // A search paced behind its own tenant's searches only took turns from itself (decisions HN20).
    if (request.routeOptions.config.waitsOnReaderThread !== true) noteArrival();
    if (request.method !== 'OPTIONS' || !request.url.startsWith('/v1/public/') || !request.headers.origin) return done();
    reply
      .code(204)
      .header('access-control-allow-origin', request.headers.origin)
      .header('access-control-allow-methods', 'GET, POST')
      .header('access-control-allow-headers', 'X-Site-Key, Content-Type')
      .header('access-control-max-age', '600')
      .header('vary', 'Origin')
      .send();
  });
  const rateLimiter = await registerRateLimit(app, config, database.db, database.pollChanges);
  // Unknown URLs are counted like every route: probing costs the prober its budget.
  app.setNotFoundHandler({ preHandler: rateLimiter.hook }, notFoundHandler);
  // A write moves its site's generation on when it answers (with or without cached answers: the
  // output caches key on it too); the hook is on the write routes only.
  app.decorate('deliveryCache', deliveryCache);
  // Before the generation moves on: an idempotent create commits as it answers.
  const idempotentOperations = registerIdempotency(app, unscoped(database.db));
  forgetOnWrite(app, deliveryCache);
  registerRouteGuard(app, database.db, routeTable, config.deliveryCacheBytes > 0 ? deliveryCache : null, [DOCS_PREFIX], database.pollChanges);
  await registerOpenApi(app, config, pkg.version, events, idempotentOperations);

  const HealthSchema = {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['ok', 'degraded', 'error'] },
      database: { type: 'string', description: '`sqlite` or `postgres` when it answers, else `unreachable`' },
      rateLimit: {
        type: 'object',
        description: 'Where rate-limit counters live now: in Redis, or in this process while Redis is unreachable (or not configured).',
        properties: { store: { type: 'string', enum: ['redis', 'memory'] }, redis: { type: 'string', enum: ['ok', 'unreachable', 'not configured'] } },
      },
    },
  } as const;
  app.get(
    '/health',
    {
      config: { scope: 'public' },
      schema: {
        tags: ['Operations'],
        operationId: 'health',
        summary: 'Liveness, database and Redis check',
        description: '200 `ok`, or 200 `degraded` while Redis is unreachable (requests are still served); 503 when the database does not answer.',
        response: { 200: HealthSchema, 503: HealthSchema },
      },
    },
    async (_req, reply) => {
      const rateLimit = rateLimiter.state();
      try {
        await sql`select 1`.execute(database.db);
        return { status: rateLimit.redis === 'unreachable' ? ('degraded' as const) : ('ok' as const), database: database.dialect, rateLimit };
      } catch {
        return reply.code(503).send({ status: 'error', database: 'unreachable', rateLimit });
      }
    },
  );

  const states = new Map<AnyModule, unknown>(modules.map((mod) => [mod, mod.init?.(deps)]));
  await app.register(
    async (v1) => {
      for (const mod of modules) await mod.routes(v1 as App, deps, states.get(mod));
    },
    { prefix: '/v1' },
  );
  for (const mod of modules) await mod.rootRoutes?.(app as App, deps, states.get(mod));

  // Tokens revoked or changed by another process (the CLI, another instance) stop working at once;
  // modules forget what they cache (redirect rules) the same way.
  changes.on('cairn_api_tokens', forgetTokens);
  changes.on('cairn_site_content', deliveryCache.changed);
  const stopWatchingChanges = database.watchChanges(changes.emit);

  const worker = new Worker({ db: database.db, log: app.log }, { pollMs: config.worker.pollMs, onJobDone: deliveryCache.changed });
  registerRetention(worker, config.retention);
  // Idempotency keys answer for 24 hours; the sweep deletes them after (decisions HR4).
  worker.task('retention.idempotency-keys', retentionTask(IDEMPOTENCY_WINDOW_MS / 86_400_000, deleteExpiredKeys));
  for (const mod of modules) mod.jobs?.(worker, deps, states.get(mod));
  app.decorate('worker', worker);
  if (config.worker.enabled) app.addHook('onReady', async () => worker.start());

  app.addHook('onClose', async () => {
    await worker.stop();
    mailer.close();
    await stopWatchingChanges();
    await rateLimiter.close();
    // A database handed in by the caller is the caller's to close.
    if (!options.database) await database.close();
  });
  return app as App & { database: Database };
}
