/**
 * Local days and hours of a site's time zone, computed in TypeScript at ingestion and stored as
 * integers (design 4): SQLite knows no IANA zones, so no zone ever reaches SQL. A day is the
 * number of days from 1970-01-01 to the local date.
 */
const DAY_MS = 86_400_000;
const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(timezone: string): Intl.DateTimeFormat {
  let format = formats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      hourCycle: 'h23',
    });
    formats.set(timezone, format);
  }
  return format;
}

/** The zone's offset from UTC at an instant, in ms (+5:30 is 19,800,000; whole seconds, as the time zone database gives them). */
export function zoneOffset(ms: number, timezone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatOf(timezone).formatToParts(new Date(ms))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour! % 24, p.minute!, p.second!) - Math.floor(ms / 1000) * 1000;
}

/**
 * The offset is asked of Intl once per zone and quarter of an hour (formatToParts costs a few
 * microseconds and a dozen objects; every collected batch and new session needs a local day):
 * the offset at both ends of the quarter, used for every instant of it when they agree. Zones
 * change offset on quarter hours of UTC (old local mean times aside), so a quarter whose ends
 * disagree holds an odd change; its instants ask Intl each.
 */
const QUARTER_MS = 900_000;
const quarters = new Map<string, { quarter: number; offset: number | null }>();

function offsetOf(ms: number, timezone: string): number {
  const quarter = Math.floor(ms / QUARTER_MS);
  let known = quarters.get(timezone);
  if (known?.quarter !== quarter) {
    const start = quarter * QUARTER_MS;
    const first = zoneOffset(start, timezone);
    known = { quarter, offset: first === zoneOffset(start + QUARTER_MS - 1000, timezone) ? first : null };
    quarters.set(timezone, known);
  }
  return known.offset ?? zoneOffset(ms, timezone);
}

export interface LocalTime {
  /** Days since 1970-01-01 of the local date. */
  day: number;
  /** 0-23. */
  hour: number;
  /** `YYYY-MM-DD`. */
  date: string;
}

export function localTime(ms: number, timezone: string): LocalTime {
  const local = ms + offsetOf(ms, timezone);
  const day = Math.floor(local / DAY_MS);
  return { day, hour: Math.floor((local - day * DAY_MS) / 3_600_000), date: dateOfDay(day) };
}

export const dateOfDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** `YYYYMM` of a day (the key of `analytics_monthly`) and the first and last day of that month. */
export function monthOf(day: number): { month: number; first: number; last: number } {
  const d = new Date(day * DAY_MS);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return { month: y * 100 + m + 1, first: Math.round(Date.UTC(y, m, 1) / DAY_MS), last: Math.round(Date.UTC(y, m + 1, 1) / DAY_MS) - 1 };
}
