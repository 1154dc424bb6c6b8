import type { FastifyBaseLogger } from 'fastify';
import { classifyDbError } from '../../db/db-errors.js';
import type { Db } from '../../db/types.js';
import { AppError } from '../../shared/errors.js';
import { SLICE_MS } from '../../shared/time-slice.js';
import { clientOf, type GeoLookup, inRanges, isBot, pageOf, referrerHostOf, sourceOf } from './analytics.enrich.js';
import type { Envelope } from './analytics.schemas.js';
import { type CollectorSettings, collectorSettings } from './analytics.settings.js';
import { type AnalyticsStore, type EventType, EVENT_TYPES, FLAG_DEAD, FLAG_RAGE, type StoredEvent, type WriteItem } from './analytics.store.js';
import { visitorIds } from './analytics.visitors.js';

/**
 * The collector (decisions A3, A4; design 1.2 and 1.3): checks a batch in the design's order,
 * turns its events into stored rows and queues them; a flush writes the queue in one
 * transaction every `flushMs` or at `flushEvents` queued events, so the request never waits on
 * the database and a burst costs one transaction, not one per batch. Beyond `maxQueuedEvents`
 * the collector answers 503 instead of holding more memory; closing the app flushes what is left.
 */
const CLOCK_SKEW_MS = 30 * 60_000;
const PV_PATTERN = /^[A-Za-z0-9_-]{6,16}$/;
const CWV = new Set(['LCP', 'INP', 'CLS', 'FCP', 'TTFB', 'FID']);
const MINUTE_MS = 60_000;
/**
 * A flush's pieces on the event loop while it keeps up (decisions AN17): another site's request
 * waits at most one piece behind it, and under a collector flood a 1 ms piece stood in front of
 * about one request in six. With more than two flushes' worth queued the flush falls behind the
 * flood, and it writes in pieces of SLICE_MS until it catches up.
 */
const FINE_SLICE_MS = 0.25;

export interface CollectorOptions {
  siteMaxEventsPerMin: number;
  flushMs: number;
  flushEvents: number;
  maxQueuedEvents: number;
}

export interface Visit {
  siteId: string;
  /** The client address: used for the visitor id, the excluded ranges and geo, and never kept. */
  ip: string;
  userAgent: string | undefined;
  body: Envelope;
}

const isNum = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
const isText = (v: unknown, min: number, max: number): v is string => typeof v === 'string' && v.length >= min && v.length <= max;
const flag = (v: unknown) => v === 1 || v === true;

/** One event of a batch as a stored row, or null when it is wrong (dropped and counted). */
export function toStoredEvent(raw: unknown, path: string, ts: number): StoredEvent | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const e = raw as Record<string, unknown>;
  const type = e.t as EventType;
  if (!EVENT_TYPES.includes(type) || !(typeof e.pv === 'string' && PV_PATTERN.test(e.pv))) return null;
  const event: StoredEvent = { ts, type, pv: e.pv, path, value: null, x: null, y: null, vw: null, selector: null, target: null, flags: 0, importKey: null };
  switch (type) {
    case 'pageview':
      return event;
    case 'engagement':
      if (!isNum(e.ms, 0, 1_800_000) || (e.sd !== undefined && !isNum(e.sd, 0, 100))) return null;
      return { ...event, value: Math.round(e.ms), y: e.sd === undefined ? null : Math.round(e.sd as number) };
    case 'click':
      if (!isNum(e.x, 0, 1) || !isNum(e.y, 0, 100_000) || (e.vw !== undefined && !isNum(e.vw, 0, 100_000))) return null;
      if (e.sel !== undefined && !isText(e.sel, 1, 300)) return null;
      return {
        ...event,
        x: Math.round(e.x * 10_000) / 10_000,
        y: Math.round(e.y),
        vw: e.vw === undefined ? null : Math.round(e.vw as number),
        selector: (e.sel as string | undefined) ?? null,
        flags: (flag(e.rage) ? FLAG_RAGE : 0) | (flag(e.dead) ? FLAG_DEAD : 0),
      };
    case 'outbound':
    case 'download': {
      if (!isText(e.url, 1, 1000)) return null;
      let url: URL;
      try {
        url = new URL(e.url);
      } catch {
        return null;
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
      url.hash = '';
      if (type === 'download') url.search = '';
      return { ...event, target: url.toString() };
    }
    case 'form_start':
    case 'form_submit':
      return isText(e.form, 1, 255) ? { ...event, target: e.form } : null;
    case 'goal':
      return isText(e.name, 1, 100) ? { ...event, target: e.name } : null;
    case 'cwv':
      if (typeof e.name !== 'string' || !CWV.has(e.name) || !isNum(e.value, 0, e.name === 'CLS' ? 100 : 60_000)) return null;
      return { ...event, target: e.name, value: e.value };
  }
}

export class Collector {
  private queue: WriteItem[] = [];
  private queued = 0;
  /** Events queued or being written: what memory holds, bounded by maxQueuedEvents. */
  private pending = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** Events accepted per site in the current minute (decisions A3: a public key can be abused). */
  private siteWindow = { startedAt: 0, counts: new Map<string, number>() };
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly store: AnalyticsStore,
    private readonly geo: GeoLookup,
    private readonly options: CollectorOptions,
    private readonly log: () => FastifyBaseLogger,
  ) {}

  /** Checks and queues one batch (design 1.3, steps 2-10); answers what was accepted and dropped. */
  async collect(visit: Visit): Promise<{ accepted: number; dropped: number }> {
    const batch = visit.body;
    const total = batch.events.length;
    const now = Date.now();
    this.countForSite(visit.siteId, total, now);
    if (this.pending + total > this.options.maxQueuedEvents) {
      throw new AppError('SERVICE_UNAVAILABLE', { message: 'The analytics queue is full; retry in a second.', headers: { 'retry-after': '1' } });
    }
    const settings = await collectorSettings(this.db, visit.siteId);
    const none = { accepted: 0, dropped: total };
    if (!settings.trackingEnabled) return none;
    const url = new URL(batch.u);
    if (!settings.hosts.includes(url.host.toLowerCase())) return none;
    if (isBot(visit.userAgent)) return none;
    if (inRanges(visit.ip, settings.excludedIps)) return none;
    const page = pageOf(url, batch.h === 1);
    if (excluded(settings, page.path)) return none;

    const events: StoredEvent[] = [];
    for (const raw of batch.events) {
      const at = (raw as { at?: unknown } | null)?.at;
      if (!isNum(at, 0, Number.MAX_SAFE_INTEGER)) continue;
      const ts = Math.min(now, Math.max(now - CLOCK_SKEW_MS, now - (batch.sentAt - at)));
      const event = toStoredEvent(raw, page.path, Math.round(ts));
      if (event) events.push(event);
    }
    if (!events.length) return none;

    const userAgent = visit.userAgent!;
    const client = clientOf(userAgent);
    const [geo, visitors] = await Promise.all([
      this.geo.lookup(visit.ip),
      visitorIds(this.db, { id: visit.siteId, timezone: settings.timezone }, visit.ip, userAgent, now),
    ]);
    const referrer = referrerHostOf(batch.r, settings.hosts);
    this.enqueue({
      siteId: visit.siteId,
      timezone: settings.timezone,
      visitors,
      importSession: null,
      facts: {
        source: sourceOf(referrer, page.utm.utm_source),
        referrer,
        ...page.utm,
        country: geo.country,
        city: geo.city,
        device: client.device,
        browser: client.browser,
        os: client.os,
        language: typeof batch.lang === 'string' ? batch.lang.slice(0, 35) : null,
        screen: batch.sw !== undefined && batch.sh !== undefined ? `${batch.sw}x${batch.sh}` : null,
      },
      events,
    });
    return { accepted: events.length, dropped: total - events.length };
  }

  private countForSite(siteId: string, events: number, now: number): void {
    if (now - this.siteWindow.startedAt >= MINUTE_MS) this.siteWindow = { startedAt: now, counts: new Map() };
    const used = this.siteWindow.counts.get(siteId) ?? 0;
    if (used + events > this.options.siteMaxEventsPerMin) {
      const after = Math.max(1, Math.ceil((this.siteWindow.startedAt + MINUTE_MS - now) / 1000));
      throw new AppError('RATE_LIMITED', {
        message: `This site's limit of ${this.options.siteMaxEventsPerMin} analytics events a minute is used up; retry in ${after} seconds.`,
        headers: { 'retry-after': String(after) },
      });
    }
    this.siteWindow.counts.set(siteId, used + events);
  }

  private enqueue(item: WriteItem): void {
    this.queue.push(item);
    this.queued += item.events.length;
    this.pending += item.events.length;
    // After close (a request that was in flight) nothing waits for a timer: written at once.
    if (this.queued >= this.options.flushEvents || this.closed) void this.flush();
    else if (!this.timer && !this.closed) {
      this.timer = setTimeout(() => void this.flush(), this.options.flushMs);
      this.timer.unref();
    }
  }

  /** Writes everything queued so far; resolves once it is stored (reads that must see it call this first). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const items = this.queue;
    const count = this.queued;
    this.queue = [];
    this.queued = 0;
    this.flushing = this.flushing.then(async () => {
      if (!items.length) return;
      try {
        await this.store.write(items, this.pending > 2 * this.options.flushEvents ? SLICE_MS : FINE_SLICE_MS);
      } catch (err) {
        // The writer stayed busy past the busy timeout (a long transaction of another request or a
        // rebuild holds SQLite's one writer): nothing was written, so the events go back to the
        // head of the queue, still counted against maxQueuedEvents, and the next flush writes them
        // (decisions AN13). Any other failure loses them: a batch that failed once (a constraint) would fail again.
        if (classifyDbError(err)?.kind === 'unavailable' && (err as { code?: string }).code === 'SQLITE_BUSY') {
          this.log().warn({ events: count }, 'analytics flush waited too long for the writer; queued again');
          this.queue = [...items, ...this.queue];
          this.queued += count;
          if (!this.timer && !this.closed) {
            this.timer = setTimeout(() => void this.flush(), this.options.flushMs);
            this.timer.unref();
          }
          return;
        }
        this.log().error({ err: { message: (err as Error).message }, events: count }, 'analytics flush failed');
      }
      this.pending -= count;
    });
    return this.flushing;
  }

  /** Writes what is queued; a flush that found the writer busy is tried again, a few times. */
  async close(): Promise<void> {
    this.closed = true;
    for (let attempt = 0; attempt < 5 && (attempt === 0 || this.queue.length); attempt++) await this.flush();
  }
}

const excluded = (settings: CollectorSettings, path: string) => settings.excludedPaths.some((glob) => glob.test(path));
