import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Insertable } from 'kysely';
import type { Db } from '../../db/types.js';
import * as repo from './redirects.repository.js';

/** Who asked, as the front end forwards it (decisions R2). */
export interface Visitor {
  referrer: string | null;
  userAgent: string | null;
  ip: string | null;
}

/** Log rows kept in memory at most; beyond it the oldest are dropped (the counters are kept). */
const MAX_PENDING_LOGS = 20_000;
/** Distinct missed paths kept in memory at most between two flushes. */
const MAX_PENDING_MISSES = 20_000;

/**
 * An address with its host part cut (decisions R8): IPv4 keeps 3 octets, IPv6 its first 48 bits
 * (the last 80 zeroed). An IPv4-mapped IPv6 address counts as IPv4. Text that is no address is dropped.
 */
export function anonymizeIp(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return null;
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  const bytes = addr.toByteArray();
  const keep = addr.kind() === 'ipv4' ? 3 : 6;
  for (let i = keep; i < bytes.length; i++) bytes[i] = 0;
  return ipaddr.fromByteArray(bytes).toString();
}

export function missHash(path: string): string {
  return createHash('sha256').update(path).digest('hex');
}

const clip = (v: string | null, n: number) => (v === null ? null : v.slice(0, n));

/**
 * Hits and misses counted in memory and written in batches (decisions R6): a resolve never
 * waits for a write lock, and one flush per second turns a thousand hits on one rule into one
 * UPDATE. A crash loses at most the last second of counts. Reads of counters and logs flush
 * first, so this instance's own hits are always visible to it.
 */
export class HitRecorder {
  private hits = new Map<number, { siteId: string; n: number; last: string }>();
  private logs: Insertable<repo.RedirectLogsTable>[] = [];
  private misses = new Map<string, Insertable<repo.RedirectMissesTable>>();
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush().catch(() => undefined), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush().catch(() => undefined);
  }

  hit(siteId: string, redirectId: number, visitor: Visitor, anonymize: boolean): void {
    const at = new Date().toISOString();
    const counted = this.hits.get(redirectId);
    if (counted) {
      counted.n += 1;
      counted.last = at;
    } else this.hits.set(redirectId, { siteId, n: 1, last: at });
    if (this.logs.length >= MAX_PENDING_LOGS) this.logs.shift();
    this.logs.push({
      site_id: siteId,
      redirect_id: redirectId,
      referrer: clip(visitor.referrer, 2048),
      user_agent: clip(visitor.userAgent, 1024),
      ip_address: visitor.ip ? (anonymize ? anonymizeIp(visitor.ip) : ipaddr.isValid(visitor.ip) ? visitor.ip : null) : null,
      created_at: at,
    });
  }

  miss(siteId: string, path: string, referrer: string | null): void {
    const at = new Date().toISOString();
    const key = `${siteId}\n${path}`;
    const seen = this.misses.get(key);
    if (seen) {
      seen.hits = Number(seen.hits) + 1;
      seen.last_seen_at = at;
      if (referrer) seen.last_referrer = clip(referrer, 2048);
      return;
    }
    if (this.misses.size >= MAX_PENDING_MISSES) return;
    this.misses.set(key, {
      site_id: siteId,
      path,
      path_hash: missHash(path),
      hits: 1,
      last_referrer: clip(referrer, 2048),
      first_seen_at: at,
      last_seen_at: at,
    });
  }

  /** Writes what is pending, one flush at a time; a failed flush puts the counters back. */
  async flush(): Promise<void> {
    // Another flush's failure is its own (its counts are back in the buffers): wait, then write.
    while (this.flushing) await this.flushing.catch(() => undefined);
    if (!this.hits.size && !this.logs.length && !this.misses.size) return;
    const hits = this.hits;
    const logs = this.logs;
    const misses = this.misses;
    this.hits = new Map();
    this.logs = [];
    this.misses = new Map();
    this.flushing = this.write(hits, logs, misses)
      .catch((err) => {
        this.log.warn({ err: { message: (err as Error).message } }, 'redirect hits not written; kept for the next flush');
        for (const [id, h] of hits) {
          const now = this.hits.get(id);
          if (now) now.n += h.n;
          else this.hits.set(id, h);
        }
        for (const [key, m] of misses) if (!this.misses.has(key)) this.misses.set(key, m);
        this.logs = [...logs, ...this.logs].slice(-MAX_PENDING_LOGS);
        throw err;
      })
      .finally(() => {
        this.flushing = null;
      });
    await this.flushing;
  }

  private async write(
    hits: Map<number, { siteId: string; n: number; last: string }>,
    logs: Insertable<repo.RedirectLogsTable>[],
    misses: Map<string, Insertable<repo.RedirectMissesTable>>,
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const gone = new Set<number>();
      for (const [id, h] of hits) if (!(await repo.addHits(trx, h.siteId, id, h.n, h.last))) gone.add(id);
      // A rule deleted since its hit takes its log rows with it.
      await repo.insertLogs(
        trx,
        logs.filter((l) => !gone.has(l.redirect_id)),
      );
      await repo.upsertMisses(trx, [...misses.values()]);
    });
  }
}
