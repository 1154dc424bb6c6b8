import { type RawBuilder, sql } from 'kysely';
import { dialectOf } from '../../db/dialect.js';
import type { Executor } from '../../db/types.js';
import { TYPE_CODE } from './analytics.codes.js';
import type { AnalyticsFilter, FilterDim } from './analytics.query.js';

/**
 * A query's filters as SQL conditions on a session `s` (and, for reports on events, on the event
 * `e`): decisions A8's rules (values of one name OR, names AND, `is_not` excludes, `contains`
 * is case-insensitive). Every dimension is a dictionary id, so a value becomes an `in` over the
 * site's `analytics_values` of that dimension; a value never stored matches nothing.
 */
/** The session column of each filter but `path`; its dictionary is the column's name, except entry pages (paths). */
const COLUMN: Record<Exclude<FilterDim, 'path'>, string> = {
  browser: 'browser',
  os: 'os',
  device: 'device',
  country: 'country',
  city: 'city',
  referrer: 'referrer',
  traffic_source: 'source',
  language: 'language',
  entry_page: 'entry_path',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
};

export interface FilterSql {
  /** Conditions on the session `s`; undefined without any. */
  sessions?: RawBuilder<unknown>;
  /** Conditions on the event `e` (the `path` filter of a report on events); undefined without any. */
  events?: RawBuilder<unknown>;
}

/**
 * `path` filters the pages a report on events counts (`e.path`) when `pathOn` is `event`; on
 * sessions it keeps the sessions with a pageview of the path (is / contains) or without one (is_not).
 */
export function filterSql(db: Executor, siteId: string, filters: readonly AnalyticsFilter[], pathOn: 'event' | 'session'): FilterSql {
  const dialect = dialectOf(db);
  const ids = (dict: string, f: AnalyticsFilter) =>
    f.op === 'contains'
      ? sql`select v.id from analytics_values v where v.site_id = ${siteId} and v.dim = ${dict} and (${sql.join(
          f.values.map((x) => dialect.containsText(['v.value'], x)),
          sql` or `,
        )})`
      : sql`select v.id from analytics_values v where v.site_id = ${siteId} and v.dim = ${dict} and v.value in (${sql.join(f.values)})`;
  const sessions: RawBuilder<unknown>[] = [];
  const events: RawBuilder<unknown>[] = [];
  for (const f of filters) {
    if (f.dim === 'path') {
      if (pathOn === 'event') {
        events.push(f.op === 'is_not' ? sql`(e.path is null or e.path not in (${ids('path', f)}))` : sql`e.path in (${ids('path', f)})`);
      } else {
        const viewed = sql`exists (select 1 from analytics_events pe where pe.session_id = s.id and pe.type = ${sql.lit(TYPE_CODE.pageview)} and pe.path in (${ids('path', f)}))`;
        sessions.push(f.op === 'is_not' ? sql`not ${viewed}` : viewed);
      }
      continue;
    }
    const column = COLUMN[f.dim];
    const dict = column === 'entry_path' ? 'path' : column;
    const col = sql.ref(`s.${column}`);
    // An unknown value (null) is "not" any value.
    sessions.push(f.op === 'is_not' ? sql`(${col} is null or ${col} not in (${ids(dict, f)}))` : sql`${col} in (${ids(dict, f)})`);
  }
  const all = (conds: RawBuilder<unknown>[]) => (conds.length ? sql`(${sql.join(conds, sql` and `)})` : undefined);
  return { sessions: all(sessions), events: all(events) };
}
