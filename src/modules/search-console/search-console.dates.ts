/**
 * Search-console days are Pacific-time calendar days (Google's reporting day), written
 * `YYYY-MM-DD` and compared as text. Arithmetic runs on UTC dates, which have no DST gaps.
 */
const PACIFIC = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Los_Angeles', year: 'numeric', month: '2-digit', day: '2-digit' });

/** The Pacific calendar day of an instant. */
export const pacificDay = (at: Date): string => PACIFIC.format(at);

/** The instant a Pacific day starts (its UTC offset taken at noon, safe on DST-change days). */
export function pacificDayStart(day: string): string {
  const noon = new Date(`${day}T12:00:00Z`);
  const local = new Date(noon.toLocaleString('en-US', { timeZone: 'America/Los_Angeles' }));
  const offsetMs = noon.getTime() - Date.UTC(local.getFullYear(), local.getMonth(), local.getDate(), local.getHours(), local.getMinutes());
  return new Date(Date.parse(`${day}T00:00:00Z`) + offsetMs).toISOString();
}

export function addDays(day: string, days: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** The same day `months` later (or earlier), clamped to the month's last day (2026-03-31 - 1 month = 2026-02-28). */
export function addMonths(day: string, months: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const first = new Date(Date.UTC(y, m - 1 + months, 1));
  const last = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  first.setUTCDate(Math.min(d, last));
  return first.toISOString().slice(0, 10);
}

/** The later of two days. */
export const laterDay = (a: string, b: string): string => (a > b ? a : b);
/** The earlier of two days. */
export const earlierDay = (a: string, b: string): string => (a < b ? a : b);

/** Days from `from` to `to`, both included. */
export const daysBetween = (from: string, to: string): number => Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000) + 1;

/** How far back Google keeps data: 16 months. */
export const HISTORY_MONTHS = 16;
