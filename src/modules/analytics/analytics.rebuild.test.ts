import { type RawBuilder, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { dialectOf } from '../../db/dialect.js';
import { useTestApp } from '../../../test/helpers/suite.js';
import { dayOf } from '../../../test/helpers/analytics.js';
import { dailyRollups } from './analytics.store.js';

const ctx = useTestApp();

/**
 * The statistics `PRAGMA optimize` (analysis_limit) left on a 10M-event file whose tables it had
 * analysed while they held one site's first day (948 sessions): `site_id =` looks as selective as
 * `site_id = and day =`, so without a named index the planner read a `GROUP BY column` through that
 * column's filter index (AR5) to skip a sort: every session the site ever had.
 */
const STALE_STATS: Array<[string, string, string]> = [
  ['analytics_sessions', 'analytics_sessions_country_idx', '73334 948 948 36 3'],
  ['analytics_sessions', 'analytics_sessions_city_idx', '73334 948 948 948 68'],
  ['analytics_sessions', 'analytics_sessions_referrer_idx', '73334 948 948 87 6'],
  ['analytics_sessions', 'analytics_sessions_entry_path_idx', '73334 948 237 6 2'],
  ['analytics_sessions', 'analytics_sessions_source_idx', '73334 948 948 474 50'],
  ['analytics_sessions', 'analytics_sessions_device_idx', '73334 948 948 316 27'],
  ['analytics_sessions', 'analytics_sessions_browser_idx', '73334 948 948 190 14'],
  ['analytics_sessions', 'analytics_sessions_day_idx', '73334 948 948 1'],
  ['analytics_sessions', 'analytics_sessions_sample_idx', '73334 948 948 68'],
  ['analytics_events', 'analytics_events_session_idx', '430000 6 1 1 1 1'],
];

describe('analytics rebuild (decisions AN7, AN12)', () => {
  it("reads one day's sessions through the day index whatever the statistics say, and runs no subquery per row", async () => {
    const api = await ctx.site();
    const at = (minute: number) => new Date(Date.parse('2026-11-20T10:00:00Z') + minute * 60_000).toISOString();
    const res = await api.post('/v1/analytics/import', {
      events: [
        { timestamp: at(0), visitorId: 'a', path: '/one', country: 'DE', pageviewId: 'pv1' },
        { timestamp: at(1), visitorId: 'a', type: 'engagement', path: '/one', pageviewId: 'pv1', engagedMs: 1000, scrollDepth: 40 },
        { timestamp: at(2), visitorId: 'b', path: '/two', country: 'FR' },
      ],
    });
    expect(res.status).toBe(201);
    const db = ctx.app.database.db;
    const sqlite = dialectOf(db).name === 'sqlite';
    const plans = await db.transaction().execute(async (trx) => {
      if (sqlite) {
        await sql`analyze`.execute(trx);
        for (const [tbl, idx, stat] of STALE_STATS) await sql`update sqlite_stat1 set stat = ${stat} where tbl = ${tbl} and idx = ${idx}`.execute(trx);
        // Loads the changed statistics into this connection.
        await sql`analyze sqlite_schema`.execute(trx);
      }
      const statements: RawBuilder<unknown>[] = dailyRollups.day(trx, api.siteId, dayOf('2026-11-20')).slice(1);
      const out: string[] = [];
      for (const statement of statements) {
        const compiled = statement.compile(trx);
        const explained = await trx.executeQuery<Record<string, unknown>>({
          ...compiled,
          sql: `${sqlite ? 'explain query plan' : 'explain'} ${compiled.sql}`,
        });
        out.push(explained.rows.map((r) => String(r.detail ?? r['QUERY PLAN'])).join('\n'));
      }
      if (sqlite) await sql`delete from sqlite_stat1 where tbl in ('analytics_sessions', 'analytics_events')`.execute(trx);
      return out;
    });
    expect(plans).toHaveLength(26);
    for (const plan of plans) {
      if (sqlite) {
        for (const line of plan.split('\n').filter((l) => /(SCAN|SEARCH) (analytics_sessions|s)\b/.test(l)))
          expect(line, plan).toMatch(/USING (COVERING )?INDEX analytics_sessions_day_idx \(site_id=\? AND day=\?\)/);
        expect(plan).not.toContain('CORRELATED');
      } else expect(plan).not.toContain('SubPlan');
    }
  });
});
