import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Insertable } from 'kysely';
import type { Db } from '../../db/types.js';
import { classifyDbError } from '../../db/db-errors.js';
import * as repo from './redirects.repository.js';
import { anonymizeIp } from '../../shared/ip.js';

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
/** Rows per write of a flush (db/prepared.ts keeps one statement per batch size). */
const WRITE_BATCH = 200;

type PendingHit = { siteId: string; n: number; last: string };
type PendingLog = Insertable<repo.RedirectLogsTable>;
type PendingMiss = Insertable<repo.RedirectMissesTable>;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export function missHash(path: string): string {
  return createHash('sha256').update(path).digest('hex');
}

const clip = (v: string | null, n: number) => (v === null ? null : v.slice(0, n));

/**
 * Hits and misses counted in memory and written in batches (decisions R6): a resolve never
 * waits for a write lock, and one flush every 250 ms turns hundreds of hits on one rule into one
 * UPDATE. A crash loses at most the last quarter second of counts. Reads of counters and logs flush
 * first, so this instance's own hits are always visible to it.
 */
export class HitRecorder {
  private hits = new Map<number, PendingHit>();
  private logs: PendingLog[] = [];
  private misses = new Map<string, PendingMiss>();
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs = 250,
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

  /** Writes what is pending, one flush at a time; what a failed flush did not write is kept for the next. */
  async flush(): Promise<void> {
    // Another flush's failure is its own (its counts are back in the buffers): wait, then write.
    while (this.flushing) await this.flushing.catch(() => undefined);
    if (!this.hits.size && !this.logs.length && !this.misses.size) return;
    const hits = [...this.hits];
    const logs = this.logs;
    const misses = [...this.misses.values()];
    this.hits = new Map();
    this.logs = [];
    this.misses = new Map();
    this.flushing = this.write(hits, logs, misses)
      .catch((err) => {
        this.log.warn({ err: { message: (err as Error).message } }, 'redirect hits not written; kept for the next flush');
        throw err;
      })
      .finally(() => {
        this.flushing = null;
      });
    await this.flushing;
  }

  /** Puts back what a failed flush did not write. */
  private restore(hits: Array<[number, PendingHit]>, logs: PendingLog[], misses: PendingMiss[]): void {
    for (const [id, h] of hits) {
      const now = this.hits.get(id);
      if (now) now.n += h.n;
      else this.hits.set(id, h);
    }
    for (const m of misses) {
      const key = `${m.site_id}\n${m.path}`;
      const now = this.misses.get(key);
      if (now) now.hits = Number(now.hits) + Number(m.hits);
      else this.misses.set(key, m);
    }
    this.logs = [...logs, ...this.logs].slice(-MAX_PENDING_LOGS);
  }

  /**
   * Writes in batches of WRITE_BATCH rows, each its own short transaction, yielding to the event
   * loop between them: a burst of thousands of hits costs many 1-ms pauses instead of one long
   * one that every other request would wait behind (on SQLite a statement runs on the event loop).
   */
  private async write(hits: Array<[number, PendingHit]>, logs: PendingLog[], misses: PendingMiss[]): Promise<void> {
    const gone = new Set<number>();
    let step = 'hits';
    let i = 0;
    try {
      for (; i < hits.length; i += WRITE_BATCH) {
        const batch = hits.slice(i, i + WRITE_BATCH);
        await this.db.transaction().execute(async (trx) => {
          for (const [id, h] of batch) if (!(await repo.addHits(trx, h.siteId, id, h.n, h.last))) gone.add(id);
        });
        await yieldToEventLoop();
      }
      step = 'misses';
      for (i = 0; i < misses.length; i += WRITE_BATCH) {
        await repo.upsertMisses(this.db, misses.slice(i, i + WRITE_BATCH));
        await yieldToEventLoop();
      }
      step = 'logs';
      // A rule deleted since its hit takes its log rows with it.
      const live = gone.size ? logs.filter((l) => !gone.has(l.redirect_id)) : logs;
      for (i = 0; i < live.length; i += WRITE_BATCH) {
        try {
          await repo.insertLogs(this.db, live.slice(i, i + WRITE_BATCH));
        } catch (err) {
          // A rule deleted between the counters and its logs: those logs go with it.
          if (classifyDbError(err)?.kind !== 'reference') throw err;
        }
        await yieldToEventLoop();
      }
    } catch (err) {
      if (step === 'hits') this.restore(hits.slice(i), logs, misses);
      else if (step === 'misses') this.restore([], logs, misses.slice(i));
      else this.restore([], (gone.size ? logs.filter((l) => !gone.has(l.redirect_id)) : logs).slice(i), []);
      throw err;
    }
  }
}
