import path from 'node:path';
import { parseKey, type SecretKeyConfig } from './shared/secrets.js';

/** Typed configuration, read from the environment once at start (issue 2, item 2). */
export interface Config {
  host: string;
  port: number;
  /** `postgres://...` selects PostgreSQL; anything else is a SQLite file path (or `:memory:`). */
  databaseUrl: string;
  dataDir: string;
  /**
   * connectTimeoutMs: how long start-up waits for the database to answer (retrying with backoff).
   * checkpointIntervalMs (SQLite): how often a thread of its own copies the WAL into the database
   * file (never the committing request: src/db/sqlite-checkpoint.ts).
   * busyTimeoutMs (SQLite): how long a write waits for another process's write lock before its
   * request answers 503; the wait is asynchronous, so other requests go on meanwhile.
   * optimizeIntervalMs (SQLite): how often the planner's statistics are refreshed (decisions H30).
   */
  database: { connectTimeoutMs: number; busyTimeoutMs: number; checkpointIntervalMs: number; optimizeIntervalMs: number };
  redisUrl: string | null;
  publicUrl: string;
  /** The base of media file URLs (a CDN in front of /files); PUBLIC_URL when unset (decisions M5). */
  mediaPublicUrl: string;
  /** How long an upload from a URL may take in all, every redirect, the answer's headers and its body (MEDIA_FETCH_TIMEOUT_MS). */
  mediaFetchTimeoutMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  rateLimit: { max: number; publicMax: number; windowMs: number };
  allowPrivateNetwork: boolean;
  /** Largest JSON body accepted, in bytes (413 beyond it). */
  bodyLimit: number;
  /** Memory held by the delivery cache of published reads (decisions P18); 0 turns it off. */
  deliveryCacheBytes: number;
  /** Test hook: the PostgreSQL schema to use (a fresh one per test file). */
  pgSchema?: string;
  /** The in-process worker (scheduled publishing, webhook delivery): on by default, polling every pollMs. */
  worker: { enabled: boolean; pollMs: number };
  /** Webhook delivery: the time a receiver has to answer, and how many deliveries in a row may fail before the webhook is disabled. */
  webhooks: { timeoutMs: number; maxFailures: number };
  /**
   * What one client may hold of the server: the whole request (headers and body) must arrive
   * within requestTimeoutMs, the headers within headersTimeoutMs, an idle keep-alive socket
   * closes after keepAliveTimeoutMs; at most maxConnections sockets at once, and at most
   * maxConnectionsPerAddress of them from one client address (an IPv6 client: its /64).
   */
  http: { requestTimeoutMs: number; headersTimeoutMs: number; keepAliveTimeoutMs: number; maxConnections: number; maxConnectionsPerAddress: number };
  /** The server key that encrypts secrets at rest (shared/secrets.ts, decisions H25). */
  secrets: SecretKeyConfig;
  /**
   * How many days finished work is kept before the retention task deletes it (0 keeps it for
   * ever): dispatched outbox events, finished webhook deliveries with their attempts, failed jobs.
   */
  retention: { outboxDays: number; webhookDeliveriesDays: number; failedJobsDays: number };
  /** IndexNow (decisions S12): where submissions go, and how often each process looks for changed URLs. */
  indexNow: { endpoint: string; intervalMs: number };
  /**
   * Search console (decisions SC1, SC2, SC6): Google's three API bases (operator configuration,
   * never taken from a credential; tests point them at a local fake), how often each site syncs,
   * the request pace, the rows read per day, and the Indexing API's daily quota.
   */
  searchConsole: {
    apiUrl: string;
    tokenUrl: string;
    indexingUrl: string;
    syncIntervalMs: number;
    requestsPerSecond: number;
    maxRowsPerDay: number;
    indexingDailyQuota: number;
    indexingIntervalMs: number;
  };
  /** E-mail notifications (decisions F3, F9): the SMTP server (`smtp://` or `smtps://`, none: e-mails are logged as skipped) and the sender. */
  mail: { smtpUrl: string | null; from: string };
  /**
   * Where files are kept: local disk under `dataDir/files` (null), or an S3-compatible bucket
   * (S3_BUCKET set). forcePathStyle: `endpoint/bucket/key` addressing, which MinIO, Ceph and most
   * self-hosted stores need; on by default when an endpoint is given. timeoutMs: how long one
   * request to the store may wait for its answer (S3_TIMEOUT_MS); a stalled store is a 503.
   */
  s3: {
    endpoint: string | null;
    bucket: string;
    region: string;
    accessKeyId: string | null;
    secretAccessKey: string | null;
    forcePathStyle: boolean;
    timeoutMs: number;
  } | null;
  /**
   * Whether forwarded client addresses (`X-Forwarded-For`) are believed (decisions A4): false
   * (default: the socket's address), true (any proxy), a hop count, or a comma list of proxy
   * addresses and CIDR ranges. Only set it behind a proxy that overwrites the header.
   */
  trustProxy: boolean | number | string;
  /**
   * Web analytics (decisions A3, A10): the collector's limits (batches a minute per address,
   * events a minute per site), the write queue (flushed every flushMs or at flushEvents queued
   * events; beyond maxQueuedEvents the collector answers 503), and the MMDB file for geo (none:
   * country and city stay null).
   */
  analytics: { rateLimitMax: number; siteMaxEventsPerMin: number; flushMs: number; flushEvents: number; maxQueuedEvents: number; geoIpDb: string | null };
  /** Rows a filtered analytics report scans exactly; a larger scan reads a 1/k sample and says so (decisions A7). */
  analyticsSampleThreshold: number;
}

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function trustProxy(env: NodeJS.ProcessEnv): boolean | number | string {
  const raw = env.TRUST_PROXY?.trim() ?? '';
  if (raw === '' || /^(0|false|no|off)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  if (!/^[0-9a-fA-F.:/, ]+$/.test(raw))
    throw new ConfigError(`TRUST_PROXY must be true, false, a hop count or a comma list of addresses and CIDR ranges, got "${raw}"`);
  return raw;
}

function url(env: NodeJS.ProcessEnv, name: string, fallback: string | null, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

function s3Config(env: NodeJS.ProcessEnv): Config['s3'] {
  const bucket = env.S3_BUCKET?.trim();
  if (!bucket) return null;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new ConfigError(`S3_BUCKET must be a bucket name (3-63 lowercase letters, digits, dots, hyphens), got "${bucket}"`);
  const endpoint = url(env, 'S3_ENDPOINT', null, ['http:', 'https:']);
  const accessKeyId = env.S3_ACCESS_KEY_ID?.trim() || null;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY?.trim() || null;
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey))
    throw new ConfigError("S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together (or neither, for the SDK's own credential chain)");
  return {
    endpoint,
    bucket,
    region: env.S3_REGION?.trim() || 'us-east-1',
    accessKeyId,
    secretAccessKey,
    forcePathStyle: boolean(env, 'S3_FORCE_PATH_STYLE', endpoint !== null),
    timeoutMs: integer(env, 'S3_TIMEOUT_MS', 10_000, 100, 600_000),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const host = env.HOST?.trim() || '127.0.0.1';
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const dataDir = path.resolve(env.CAIRN_DATA_DIR?.trim() || './data');
  const rawDb = env.DATABASE_URL?.trim();
  let databaseUrl: string;
  if (!rawDb) databaseUrl = path.join(dataDir, 'cairn.db');
  else if (/^postgres(ql)?:\/\//.test(rawDb)) {
    try {
      new URL(rawDb);
    } catch {
      throw new ConfigError(`DATABASE_URL is not a valid PostgreSQL URL`);
    }
    databaseUrl = rawDb;
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rawDb)) {
    throw new ConfigError(`DATABASE_URL must be a SQLite file path or a postgres:// URL`);
  } else databaseUrl = rawDb === ':memory:' ? rawDb : path.resolve(rawDb.replace(/^file:/, ''));

  const logLevel = (env.LOG_LEVEL?.trim() || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }
  const config: Config = {
    host,
    port,
    databaseUrl,
    dataDir,
    database: {
      connectTimeoutMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', 30_000, 0, 600_000),
      busyTimeoutMs: integer(env, 'SQLITE_BUSY_TIMEOUT_MS', 5_000, 0, 120_000),
      checkpointIntervalMs: integer(env, 'SQLITE_CHECKPOINT_INTERVAL_MS', 1_000, 50, 600_000),
      optimizeIntervalMs: integer(env, 'SQLITE_OPTIMIZE_INTERVAL_MS', 60_000, 1_000, 86_400_000),
    },
    redisUrl: url(env, 'REDIS_URL', null, ['redis:', 'rediss:']),
    publicUrl: url(env, 'PUBLIC_URL', `http://${host}:${port}`, ['http:', 'https:'])!,
    mediaPublicUrl: url(env, 'MEDIA_PUBLIC_URL', null, ['http:', 'https:']) ?? url(env, 'PUBLIC_URL', `http://${host}:${port}`, ['http:', 'https:'])!,
    mediaFetchTimeoutMs: integer(env, 'MEDIA_FETCH_TIMEOUT_MS', 30_000, 100, 600_000),
    logLevel,
    rateLimit: {
      max: integer(env, 'RATE_LIMIT_MAX', 600, 1, 10_000_000),
      publicMax: integer(env, 'RATE_LIMIT_PUBLIC_MAX', 120, 1, 10_000_000),
      windowMs: integer(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1000, 86_400_000),
    },
    allowPrivateNetwork: boolean(env, 'CAIRN_ALLOW_PRIVATE_NETWORK', false),
    bodyLimit: integer(env, 'BODY_LIMIT', 2 * 1024 * 1024, 1024, 100 * 1024 * 1024),
    deliveryCacheBytes: integer(env, 'DELIVERY_CACHE_BYTES', 32 * 1024 * 1024, 0, 16 * 1024 * 1024 * 1024),
    worker: { enabled: boolean(env, 'CAIRN_WORKER', true), pollMs: integer(env, 'WORKER_POLL_MS', 1000, 50, 60_000) },
    webhooks: {
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      maxFailures: integer(env, 'WEBHOOK_MAX_FAILURES', 20, 1, 10_000),
    },
    http: {
      requestTimeoutMs: integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
      headersTimeoutMs: integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
      keepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
      maxConnections: integer(env, 'HTTP_MAX_CONNECTIONS', 1024, 1, 1_000_000),
      // Behind a proxy every connection comes from the proxy: no cap unless one is set.
      maxConnectionsPerAddress: integer(env, 'HTTP_MAX_CONNECTIONS_PER_ADDRESS', trustProxy(env) === false ? 64 : 1_000_000, 1, 1_000_000),
    },
    secrets: {
      key: env.CAIRN_SECRET_KEY?.trim() || null,
      previous: (env.CAIRN_SECRET_KEY_PREVIOUS ?? '')
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
    },
    retention: {
      outboxDays: integer(env, 'RETENTION_OUTBOX_DAYS', 7, 0, 36_500),
      webhookDeliveriesDays: integer(env, 'RETENTION_WEBHOOK_DELIVERIES_DAYS', 30, 0, 36_500),
      failedJobsDays: integer(env, 'RETENTION_FAILED_JOBS_DAYS', 30, 0, 36_500),
    },
    indexNow: {
      endpoint: url(env, 'INDEXNOW_ENDPOINT', 'https://api.indexnow.org/indexnow', ['http:', 'https:'])!,
      intervalMs: integer(env, 'INDEXNOW_INTERVAL_MS', 10_000, 0, 86_400_000),
    },
    searchConsole: {
      apiUrl: url(env, 'SEARCH_CONSOLE_API_URL', 'https://searchconsole.googleapis.com', ['http:', 'https:'])!,
      tokenUrl: url(env, 'SEARCH_CONSOLE_TOKEN_URL', 'https://oauth2.googleapis.com/token', ['http:', 'https:'])!,
      indexingUrl: url(env, 'SEARCH_INDEXING_API_URL', 'https://indexing.googleapis.com', ['http:', 'https:'])!,
      syncIntervalMs: integer(env, 'SEARCH_CONSOLE_SYNC_INTERVAL_MS', 6 * 3_600_000, 1000, 7 * 86_400_000),
      requestsPerSecond: integer(env, 'SEARCH_CONSOLE_RPS', 2, 1, 1000),
      maxRowsPerDay: integer(env, 'SEARCH_CONSOLE_MAX_ROWS_PER_DAY', 100_000, 1, 10_000_000),
      indexingDailyQuota: integer(env, 'SEARCH_INDEXING_DAILY_QUOTA', 200, 0, 1_000_000),
      indexingIntervalMs: integer(env, 'SEARCH_INDEXING_INTERVAL_MS', 60_000, 0, 86_400_000),
    },
    s3: s3Config(env),
    trustProxy: trustProxy(env),
    analytics: {
      rateLimitMax: integer(env, 'ANALYTICS_RATE_LIMIT_MAX', 600, 1, 10_000_000),
      siteMaxEventsPerMin: integer(env, 'ANALYTICS_SITE_MAX_EVENTS_PER_MIN', 60_000, 1, 100_000_000),
      flushMs: integer(env, 'ANALYTICS_FLUSH_MS', 250, 1, 60_000),
      flushEvents: integer(env, 'ANALYTICS_FLUSH_EVENTS', 2_000, 1, 100_000),
      maxQueuedEvents: integer(env, 'ANALYTICS_MAX_QUEUED_EVENTS', 100_000, 50, 10_000_000),
      geoIpDb: env.ANALYTICS_GEOIP_DB?.trim() ? path.resolve(env.ANALYTICS_GEOIP_DB.trim()) : null,
    },
    analyticsSampleThreshold: integer(env, 'ANALYTICS_SAMPLE_THRESHOLD', 500_000, 1, 1_000_000_000),
    mail: {
      smtpUrl: url(env, 'SMTP_URL', null, ['smtp:', 'smtps:']),
      from: env.MAIL_FROM?.trim() || 'Cairn <no-reply@localhost>',
    },
    ...overrides,
  };
  // A malformed key is a start-up error, not a failure at the first webhook.
  try {
    if (config.secrets.key) parseKey(config.secrets.key, 'CAIRN_SECRET_KEY');
    for (const [i, k] of config.secrets.previous.entries()) parseKey(k, `CAIRN_SECRET_KEY_PREVIOUS (key ${i + 1})`);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  if (config.http.headersTimeoutMs > config.http.requestTimeoutMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  return config;
}

export function isPostgres(databaseUrl: string): boolean {
  return /^postgres(ql)?:\/\//.test(databaseUrl);
}
