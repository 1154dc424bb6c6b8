import { sql } from 'kysely';
import { expect } from 'vitest';
import { analyticsOf } from '../../src/modules/analytics/analytics.routes.js';
import { rebuildDirtyDays } from '../../src/modules/analytics/analytics.tasks.js';
import type { TestApp } from './app.js';
import type { SiteClient } from './suite.js';

/** A desktop Chrome: isbot flags HeadlessChrome and empty user agents, so tests send a real one. */
export const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
export const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

export interface Sent {
  status: number;
  body: any;
  headers: Record<string, unknown>;
  raw: string;
}

/** The public collector of `app`, as a tracker's batch reaches it. */
export function collector(app: TestApp, siteKey: string) {
  return async function send(
    batch: Record<string, unknown> | string,
    opts: { ip?: string; ua?: string | null; contentType?: string; headers?: Record<string, string>; query?: boolean } = {},
  ): Promise<Sent> {
    const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'text/plain;charset=UTF-8', ...(opts.headers ?? {}) };
    if (opts.ua !== null) headers['user-agent'] = opts.ua ?? CHROME;
    if (!opts.query) headers['x-site-key'] = siteKey;
    const res = await app.inject({
      method: 'POST',
      url: `/v1/public/analytics/events${opts.query ? `?siteKey=${siteKey}` : ''}`,
      payload: typeof batch === 'string' ? batch : JSON.stringify(batch),
      headers,
      remoteAddress: opts.ip ?? '81.2.69.142',
    });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null, headers: res.headers, raw: `${JSON.stringify(res.headers)}\n${res.body}` };
  };
}

/** A batch on `url` of `events` (each at the batch's sentAt unless it says otherwise). */
export function batch(url: string, events: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  const sentAt = Date.now();
  return { v: 1, u: url, sentAt, events: events.map((e) => ({ pv: 'pv0001', at: sentAt, ...e })), ...extra };
}

export const flush = (app: TestApp) => analyticsOf(app.database.db).collector!.flush();

export async function publicKey(api: SiteClient): Promise<string> {
  return (await api.get('/v1/site/info')).body.data.publicKey;
}

const dimsOf = (siteId: string) => sql`(select id, value from analytics_values where site_id = ${siteId})`;

/** The site's sessions, oldest first, with their dimension values as text. */
export async function sessionsOf(app: TestApp, siteId: string): Promise<any[]> {
  const v = dimsOf(siteId);
  const { rows } = await sql<any>`
    select s.id, cast(s.visitor as text) as visitor, s.day, s.hour, s.started_at, s.last_at, s.duration_ms, s.pageviews, s.events, s.bounce, s.conversions,
      (select value from ${v} x where x.id = s.entry_path) as entry_path, (select value from ${v} x where x.id = s.exit_path) as exit_path,
      (select value from ${v} x where x.id = s.source) as source, (select value from ${v} x where x.id = s.referrer) as referrer,
      (select value from ${v} x where x.id = s.utm_source) as utm_source, (select value from ${v} x where x.id = s.utm_medium) as utm_medium,
      (select value from ${v} x where x.id = s.utm_campaign) as utm_campaign, (select value from ${v} x where x.id = s.utm_term) as utm_term,
      (select value from ${v} x where x.id = s.utm_content) as utm_content, (select value from ${v} x where x.id = s.country) as country,
      (select value from ${v} x where x.id = s.city) as city, (select value from ${v} x where x.id = s.device) as device,
      (select value from ${v} x where x.id = s.browser) as browser, (select value from ${v} x where x.id = s.os) as os,
      (select value from ${v} x where x.id = s.language) as language, (select value from ${v} x where x.id = s.screen) as screen
    from analytics_sessions s where s.site_id = ${siteId} order by s.started_at, s.id`.execute(app.database.db);
  return rows.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, val]) => [
        k,
        typeof val === 'string' && /^(day|hour|started_at|last_at|duration_ms|pageviews|events|bounce|conversions|id)$/.test(k) ? Number(val) : val,
      ]),
    ),
  );
}

/** The site's events in time order, with their values as text and their type's name. */
export async function eventsOf(app: TestApp, siteId: string): Promise<any[]> {
  const v = dimsOf(siteId);
  const { rows } = await sql<any>`
    select e.session_id, e.ts, e.type, e.value, e.x, e.y, e.vw, e.flags, e.import_key,
      (select value from ${v} x where x.id = e.path) as path, (select value from ${v} x where x.id = e.sel) as selector,
      (select value from ${v} x where x.id = e.target) as target
    from analytics_events e where e.site_id = ${siteId} order by e.ts, e.id`.execute(app.database.db);
  const types = ['', 'pageview', 'engagement', 'click', 'outbound', 'download', 'form_start', 'form_submit', 'goal', 'cwv'];
  return rows.map((r) => ({ ...r, ts: Number(r.ts), session_id: Number(r.session_id), type: types[Number(r.type)], flags: Number(r.flags) }));
}

export const DAY_MS = 86_400_000;
/** The day number of a `YYYY-MM-DD` date, as stored. */
export const dayOf = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;

/**
 * Rebuilds every dirty day, as the worker does once days are quiet (`quietMs` 0 here). A rebuild
 * keeps a day dirty when it changed in the rebuild's own millisecond (the change may have come
 * after its read: `changed_at < startedAt`), so a test that expects clean days waits for the
 * next millisecond after its last write first.
 */
export async function rebuildQuietDays(app: TestApp, now?: number): Promise<number> {
  const last = Date.now();
  while (Date.now() === last) await new Promise((resolve) => setTimeout(resolve, 1));
  return rebuildDirtyDays(analyticsOf(app.database.db).store, now ?? Date.now(), 0);
}

/** A vital's answer without samples (decisions AR4). */
export const zeroVital = (metric: string) => ({
  metric,
  unit: metric === 'CLS' ? 'score' : 'ms',
  p75: null,
  rating: null,
  samples: 0,
  good: 0,
  needsImprovement: 0,
  poor: 0,
});

/** Imports events through `POST /v1/analytics/import`, expecting every one stored. */
export async function importAll(api: SiteClient, events: object[]) {
  const res = await api.post('/v1/analytics/import', { events });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ imported: events.length, errorCount: 0 });
}

/** Rebuilds every dirty day, quiet or not (the task does 20 a call, as a worker tick). */
export async function rebuildAllDays(app: TestApp) {
  while ((await rebuildQuietDays(app, Date.now() + DAY_MS)) > 0);
}
