import { Type } from 'typebox';
import { invalid } from './errors.js';

/**
 * The period of a stats query (decisions A8): `period` (`Nd` = N local days ending today, `Nm` =
 * from the first day of the month N-1 months back), or `startDate` and `endDate` together, never
 * both; days are the site's timezone's.
 */
export const PERIODS = ['7d', '30d', '90d', '3m', '6m', '12m'] as const;
export type Period = (typeof PERIODS)[number];
export const DEFAULT_PERIOD: Period = '30d';
export const MAX_RANGE_DAYS = 3660;

export const PeriodQueryProperties = {
  period: Type.Optional(Type.Unsafe<Period>({ type: 'string', enum: [...PERIODS], description: `${PERIODS.join(', ')} (default ${DEFAULT_PERIOD})` })),
  startDate: Type.Optional(Type.String({ format: 'date', description: 'First day (YYYY-MM-DD), with endDate' })),
  endDate: Type.Optional(Type.String({ format: 'date', description: 'Last day (YYYY-MM-DD), with startDate' })),
};

export interface DateRange {
  startDate: string;
  endDate: string;
}

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar day (YYYY-MM-DD) of an instant in a timezone. */
export function localDay(at: Date, timezone: string): string {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timezone, f);
  }
  return f.format(at);
}

const toUtc = (day: string) => Date.parse(`${day}T00:00:00Z`);
const fromUtc = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The days a query covers, in `timezone`, ending today for a period. */
export function resolvePeriod(query: { period?: Period; startDate?: string; endDate?: string }, timezone: string, now = new Date()): DateRange {
  const { period, startDate, endDate } = query;
  if (startDate !== undefined || endDate !== undefined) {
    if (period !== undefined) throw invalid('DATE_RANGE_INVALID', 'period', 'Send either period or startDate and endDate, not both.');
    if (startDate === undefined || endDate === undefined)
      throw invalid('DATE_RANGE_INVALID', startDate === undefined ? 'startDate' : 'endDate', 'startDate and endDate go together.');
    if (startDate > endDate) throw invalid('DATE_RANGE_INVALID', 'startDate', 'startDate must not be after endDate.');
    if ((toUtc(endDate) - toUtc(startDate)) / DAY_MS + 1 > MAX_RANGE_DAYS) throw invalid('DATE_RANGE_TOO_LONG', 'endDate');
    return { startDate, endDate };
  }
  const today = localDay(now, timezone);
  const chosen = period ?? DEFAULT_PERIOD;
  const n = Number(chosen.slice(0, -1));
  if (chosen.endsWith('d')) return { startDate: fromUtc(toUtc(today) - (n - 1) * DAY_MS), endDate: today };
  const t = new Date(toUtc(today));
  return { startDate: fromUtc(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() - (n - 1), 1)), endDate: today };
}
