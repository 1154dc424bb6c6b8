import type { Db } from '../../db/types.js';
import { referrerHostOf, sourceOf } from './analytics.enrich.js';
import * as repo from './analytics.repository.js';
import { DEFAULTS } from './analytics.settings.js';
import {
  type AnalyticsStore,
  type EventType,
  EVENT_TYPES,
  FLAG_DEAD,
  FLAG_RAGE,
  type SessionFacts,
  type StoredEvent,
  type WriteItem,
} from './analytics.store.js';
import { localTime } from './analytics.time.js';
import { importedVisitorId } from './analytics.visitors.js';

/**
 * Import of historical events (decisions A5; design 1.5): explicit timestamps and visitor ids,
 * no bot, host, exclusion or geo processing (the caller states the facts). A wrong event is a
 * numbered error and the rest are stored; an `id` already stored is skipped, so a re-run stores
 * nothing twice. Written in one transaction; the days it touches become dirty, so reports see it.
 */
const DAY_MS = 86_400_000;
const FUTURE_MS = 5 * 60_000;
const MAX_LISTED_ERRORS = 1000;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

export interface ImportError {
  index: number;
  field: string;
  message: string;
}

type Raw = Record<string, unknown>;

class Check {
  readonly errors: ImportError[] = [];
  constructor(
    private readonly e: Raw,
    private readonly index: number,
  ) {}
  fail(field: string, message: string): null {
    this.errors.push({ index: this.index, field, message });
    return null;
  }
  text(field: string, max: number, min = 1): string | null {
    const v = this.e[field];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string' || v.length < min || v.length > max) return this.fail(field, `must be a string of ${min}-${max} characters`);
    return v;
  }
  num(field: string, min: number, max: number): number | null {
    const v = this.e[field];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) return this.fail(field, `must be a number from ${min} to ${max}`);
    return v;
  }
  oneOf<T extends string>(field: string, values: readonly T[]): T | null {
    const v = this.e[field];
    if (v === undefined || v === null) return null;
    if (!values.includes(v as T)) return this.fail(field, `must be one of ${values.join(', ')}`);
    return v as T;
  }
}

interface Parsed {
  index: number;
  ts: number;
  visitorId: string;
  sessionId: string | null;
  facts: SessionFacts;
  event: StoredEvent;
}

function pathOf(c: Check): string | null {
  const url = c.text('url', 2048);
  const path = c.text('path', 1000);
  if (path !== null) return path.startsWith('/') ? path : c.fail('path', 'must start with /');
  if (url === null) return c.fail('path', 'path or url is required');
  try {
    const u = new URL(url);
    const p = decodeURIComponent(u.pathname);
    return p.length > 1 ? p.replace(/\/+$/, '') || '/' : p;
  } catch {
    return c.fail('url', 'must be an absolute URL');
  }
}

function parseOne(raw: unknown, index: number, now: number, oldest: number, siteHosts: string[]): Parsed | ImportError[] {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return [{ index, field: '', message: 'must be an object' }];
  const e = raw as Raw;
  const c = new Check(e, index);
  let ts = Number.NaN;
  if (typeof e.timestamp !== 'string' || !ISO.test(e.timestamp) || Number.isNaN((ts = Date.parse(e.timestamp))))
    c.fail('timestamp', 'must be an ISO 8601 date-time with an offset');
  else if (ts > now + FUTURE_MS) c.fail('timestamp', 'must not be more than 5 minutes in the future');
  else if (ts < oldest) c.fail('timestamp', "is older than the site's aggregateRetentionDays");
  const visitorId = c.text('visitorId', 100);
  if (e.visitorId === undefined) c.fail('visitorId', 'is required');
  const sessionId = c.text('sessionId', 100);
  const id = c.text('id', 200);
  const type = (c.oneOf('type', EVENT_TYPES) ?? 'pageview') as EventType;
  const path = pathOf(c);
  const country = c.text('country', 2, 2);
  if (country !== null && !/^[A-Za-z]{2}$/.test(country)) c.fail('country', 'must be an ISO 3166-1 alpha-2 code');
  const screen = c.text('screen', 20);
  if (screen !== null && !/^\d{1,6}x\d{1,6}$/.test(screen)) c.fail('screen', 'must be WIDTHxHEIGHT, e.g. 1440x900');
  const referrer = c.text('referrer', 2048);
  const utm = {
    utm_source: c.text('utmSource', 300),
    utm_medium: c.text('utmMedium', 300),
    utm_campaign: c.text('utmCampaign', 300),
    utm_term: c.text('utmTerm', 300),
    utm_content: c.text('utmContent', 300),
  };
  const referrerHost =
    referrer === null ? null : (referrerHostOf(referrer, siteHosts) ?? (/^[\w.-]+$/.test(referrer) ? referrer.toLowerCase().replace(/^www\./, '') : null));
  const facts: SessionFacts = {
    source: sourceOf(referrerHost, utm.utm_source),
    referrer: referrerHost,
    ...utm,
    country: country?.toUpperCase() ?? null,
    city: c.text('city', 200),
    device: c.oneOf('device', ['desktop', 'mobile', 'tablet'] as const),
    browser: c.text('browser', 100),
    os: c.text('os', 100),
    language: c.text('language', 35),
    screen,
  };
  const event: StoredEvent = {
    ts,
    type,
    pv: c.text('pageviewId', 16),
    path,
    value: null,
    x: null,
    y: null,
    vw: null,
    selector: null,
    target: null,
    flags: 0,
    importKey: id,
  };
  switch (type) {
    case 'engagement':
      event.value = c.num('engagedMs', 0, 1_800_000);
      event.y = c.num('scrollDepth', 0, 100);
      break;
    case 'click':
      event.x = c.num('x', 0, 1);
      event.y = c.num('y', 0, 100_000);
      event.vw = c.num('viewportWidth', 0, 100_000);
      event.selector = c.text('selector', 300);
      event.flags = (e.rage === true || e.rage === 1 ? FLAG_RAGE : 0) | (e.dead === true || e.dead === 1 ? FLAG_DEAD : 0);
      break;
    case 'outbound':
    case 'download':
      event.target = c.text('targetUrl', 1000) ?? c.fail('targetUrl', 'is required for outbound and download events');
      break;
    case 'form_start':
    case 'form_submit':
      event.target = c.text('form', 255) ?? c.fail('form', 'is required for form events');
      break;
    case 'goal':
      event.target = c.text('name', 100) ?? c.fail('name', 'is required for goals');
      event.value = c.num('value', -1e12, 1e12);
      break;
    case 'cwv':
      event.target = c.oneOf('metric', ['LCP', 'INP', 'CLS', 'FCP', 'TTFB', 'FID'] as const) ?? c.fail('metric', 'is required for cwv events');
      event.value = c.num('value', 0, 60_000) ?? c.fail('value', 'is required for cwv events');
      break;
  }
  if (c.errors.length) return c.errors;
  return { index, ts, visitorId: visitorId!, sessionId, facts, event };
}

export async function importEvents(db: Db, store: AnalyticsStore, siteId: string, events: readonly unknown[], now = Date.now()) {
  const [site, settings] = await Promise.all([repo.findSite(db, siteId), repo.findSettings(db, siteId)]);
  const aggregateDays = settings?.aggregate_retention_days ?? DEFAULTS.aggregateRetentionDays;
  const timezone = site!.timezone;
  const oldest = (localTime(now, timezone).day - aggregateDays) * DAY_MS;
  const hosts = [site!.domain.toLowerCase(), `www.${site!.domain.toLowerCase()}`];
  const errors: ImportError[] = [];
  const parsed: Parsed[] = [];
  for (const [index, raw] of events.entries()) {
    const one = parseOne(raw, index, now, oldest, hosts);
    if (Array.isArray(one)) errors.push(...one);
    else parsed.push(one);
  }
  const keys = parsed.map((p) => p.event.importKey).filter((k): k is string => k !== null);
  const stored = await store.existingImportKeys(siteId, keys);
  const seen = new Set<string>();
  let skipped = 0;
  const fresh = parsed.filter((p) => {
    const key = p.event.importKey;
    if (key === null) return true;
    if (stored.has(key) || seen.has(key)) {
      skipped++;
      return false;
    }
    seen.add(key);
    return true;
  });
  // Time order, so the 30-minute rule sees each visitor's events as they happened.
  fresh.sort((a, b) => a.ts - b.ts || a.index - b.index);
  const items: WriteItem[] = fresh.map((p) => ({
    siteId,
    timezone,
    visitors: [importedVisitorId(siteId, p.visitorId)],
    importSession: p.sessionId === null ? null : `${p.visitorId.length}:${p.visitorId}:${p.sessionId}`,
    facts: p.facts,
    events: [p.event],
  }));
  await store.write(items);
  return { imported: items.length, skipped, errors: errors.slice(0, MAX_LISTED_ERRORS), errorCount: errors.length };
}
