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
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', hourCycle: 'h23' });
    formats.set(timezone, format);
  }
  return format;
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
  const parts: Record<string, number> = {};
  for (const p of formatOf(timezone).formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const utc = Date.UTC(parts.year!, parts.month! - 1, parts.day!);
  return { day: Math.round(utc / DAY_MS), hour: parts.hour! % 24, date: new Date(utc).toISOString().slice(0, 10) };
}

export const dateOfDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** `YYYYMM` of a day (the key of `analytics_monthly`) and the first and last day of that month. */
export function monthOf(day: number): { month: number; first: number; last: number } {
  const d = new Date(day * DAY_MS);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return { month: y * 100 + m + 1, first: Math.round(Date.UTC(y, m, 1) / DAY_MS), last: Math.round(Date.UTC(y, m + 1, 1) / DAY_MS) - 1 };
}
