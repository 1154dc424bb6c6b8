import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { type AnalyticsQueryString, localMidnight, parseAnalyticsQuery, parseFilters } from './analytics.query.js';
import { zoneOffset } from './analytics.time.js';

const KOLKATA = { id: 'site-1', timezone: 'Asia/Kolkata' };
/** 2026-11-26 00:30 in Kolkata (+5:30), still the 25th in UTC: "today" is the site's day. */
const NOW = Date.parse('2026-11-25T19:00:00Z');
const parse = (q: AnalyticsQueryString, site = KOLKATA, now = NOW) => parseAnalyticsQuery(site, q, now);
const dayOf = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;

function errorOf(fn: () => unknown): { code: string; errors: Record<string, string[]> } {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) {
      const body = err.toBody();
      return { code: body.code, errors: body.errors ?? {} };
    }
    throw err;
  }
  throw new Error('expected an error');
}

describe('analytics query model (decisions A8, design 4)', () => {
  it('defaults to 30 local days ending today in the site zone, with UTC bounds at local midnights', () => {
    const q = parse({});
    expect(q).toMatchObject({
      siteId: 'site-1',
      timezone: 'Asia/Kolkata',
      period: '30d',
      from: '2026-10-28',
      to: '2026-11-26',
      fromDay: dayOf('2026-10-28'),
      toDay: dayOf('2026-11-26'),
      utcFrom: Date.parse('2026-10-27T18:30:00Z'),
      utcTo: Date.parse('2026-11-26T18:30:00Z'),
      granularity: 'day',
      compare: null,
      filters: [],
      page: 1,
      limit: 15,
      sortOrder: 'desc',
    });
    expect(q.sortBy).toBeUndefined();
  });

  it('Nd counts days back from today; Nm starts on the first of the month N-1 months back (3m is not 90d)', () => {
    expect(parse({ period: '7d' })).toMatchObject({ from: '2026-11-20', to: '2026-11-26', granularity: 'day' });
    expect(parse({ period: '90d' })).toMatchObject({ from: '2026-08-29', to: '2026-11-26', granularity: 'day' });
    expect(parse({ period: '3m' })).toMatchObject({ from: '2026-09-01', to: '2026-11-26', granularity: 'day' });
    expect(parse({ period: '6m' })).toMatchObject({ from: '2026-06-01', to: '2026-11-26', granularity: 'month' });
    expect(parse({ period: '12m' })).toMatchObject({ from: '2025-12-01', to: '2026-11-26', granularity: 'month' });
  });

  it('custom dates: granularity hour up to 2 days, day up to 93, month beyond', () => {
    expect(parse({ startDate: '2026-11-01', endDate: '2026-11-02' })).toMatchObject({ period: 'custom', granularity: 'hour' });
    expect(parse({ startDate: '2026-11-01', endDate: '2026-11-03' }).granularity).toBe('day');
    expect(parse({ startDate: '2026-01-01', endDate: '2026-04-03' }).granularity).toBe('day'); // 93 days
    expect(parse({ startDate: '2026-01-01', endDate: '2026-04-04' }).granularity).toBe('month'); // 94 days
    expect(parse({ startDate: '2016-11-19', endDate: '2026-11-26' }).fromDay).toBe(dayOf('2016-11-19')); // 3,660 days
  });

  it('a chart granularity is checked: hour up to 7 days, at most 1,000 buckets', () => {
    expect(parse({ period: '7d', granularity: 'hour' }).granularity).toBe('hour');
    expect(errorOf(() => parse({ startDate: '2026-11-01', endDate: '2026-11-08', granularity: 'hour' }))).toEqual({
      code: 'VALIDATION_FAILED',
      errors: { granularity: ['hour granularity covers at most 7 days'] },
    });
    expect(parse({ startDate: '2024-01-01', endDate: '2026-09-26', granularity: 'day' }).granularity).toBe('day'); // 1,000 days
    expect(errorOf(() => parse({ startDate: '2024-01-01', endDate: '2026-09-27', granularity: 'day' })).errors).toHaveProperty('granularity');
    expect(parse({ period: '7d', granularity: 'month' }).granularity).toBe('month');
  });

  it('compare=previous is the same number of days just before; for Nm the N months before', () => {
    expect(parse({ period: '7d', compare: 'previous' }).compare).toMatchObject({ kind: 'previous', from: '2026-11-13', to: '2026-11-19' });
    expect(parse({ startDate: '2026-03-01', endDate: '2026-03-31', compare: 'previous' }).compare).toMatchObject({ from: '2026-01-29', to: '2026-02-28' });
    expect(parse({ period: '3m', compare: 'previous' }).compare).toMatchObject({ from: '2026-06-01', to: '2026-08-26' });
    const c = parse({ period: '7d', compare: 'previous' }).compare!;
    expect(c.utcFrom).toBe(Date.parse('2026-11-12T18:30:00Z'));
    expect(c.utcTo).toBe(Date.parse('2026-11-19T18:30:00Z'));
  });

  it('compare=yoy is the same dates a year earlier (29 Feb becomes 28 Feb)', () => {
    expect(parse({ period: '7d', compare: 'yoy' }).compare).toMatchObject({ kind: 'yoy', from: '2025-11-20', to: '2025-11-26' });
    expect(parse({ startDate: '2024-02-29', endDate: '2024-03-01', compare: 'yoy' }).compare).toMatchObject({ from: '2023-02-28', to: '2023-03-01' });
  });

  it('local midnights follow the zone: +5:30, +5:45, and DST days of 23 and 25 hours', () => {
    expect(zoneOffset(Date.parse('2026-06-01T00:00:00Z'), 'Asia/Kolkata')).toBe(5.5 * 3_600_000);
    expect(localMidnight(dayOf('2026-06-01'), 'Asia/Kathmandu')).toBe(Date.parse('2026-05-31T18:15:00Z'));
    // New York springs forward on 2026-03-08 (a 23-hour day) and falls back on 2026-11-01 (25 hours).
    const ny = { id: 's', timezone: 'America/New_York' };
    const spring = parse({ startDate: '2026-03-08', endDate: '2026-03-08' }, ny);
    expect([spring.utcFrom, spring.utcTo]).toEqual([Date.parse('2026-03-08T05:00:00Z'), Date.parse('2026-03-09T04:00:00Z')]);
    const fall = parse({ startDate: '2026-11-01', endDate: '2026-11-01' }, ny);
    expect(fall.utcTo - fall.utcFrom).toBe(25 * 3_600_000);
    // Today in New York at 2026-11-26T03:00Z is still the 25th.
    expect(parse({ period: '7d' }, ny, Date.parse('2026-11-26T03:00:00Z')).to).toBe('2026-11-25');
  });

  it('filters: values of one name OR per operator, ! is not, ~ contains, \\! a literal; countries upper-cased', () => {
    expect(
      parseFilters({
        country: ['de', '!FR', 'DE'],
        path: ['~blog', '/a'],
        browser: ['\\~Firefox', '\\!IE'],
      }),
    ).toEqual([
      { dim: 'browser', op: 'is', values: ['~Firefox', '!IE'] },
      { dim: 'country', op: 'is', values: ['DE'] },
      { dim: 'country', op: 'is_not', values: ['FR'] },
      { dim: 'path', op: 'is', values: ['/a'] },
      { dim: 'path', op: 'contains', values: ['blog'] },
    ]);
    expect(parseFilters({ device: ['~mob'], traffic_source: ['!direct'], country: ['~e'] })).toEqual([
      { dim: 'device', op: 'contains', values: ['mob'] },
      { dim: 'country', op: 'contains', values: ['e'] },
      { dim: 'traffic_source', op: 'is_not', values: ['direct'] },
    ]);
  });

  it('a filter value out of its set is a 422 naming the parameter', () => {
    expect(errorOf(() => parseFilters({ device: ['phone'] })).errors).toEqual({
      device: ['must be one of: desktop, mobile, tablet (with ! for is-not, ~ for contains)'],
    });
    expect(errorOf(() => parseFilters({ traffic_source: ['!email'] })).errors).toHaveProperty('traffic_source');
    expect(errorOf(() => parseFilters({ country: ['DEU'] })).errors).toEqual({ country: ['must be a two-letter country code (ISO 3166-1 alpha-2)'] });
    expect(errorOf(() => parseFilters({ path: ['blog'] })).errors).toEqual({ path: ['must start with /'] });
    expect(errorOf(() => parseFilters({ entry_page: ['!blog'] })).errors).toEqual({ entry_page: ['must start with /'] });
    expect(errorOf(() => parseFilters({ browser: ['!'] })).errors).toEqual({ browser: ['a filter value must not be empty'] });
  });

  it('the date rules of A8: DATE_RANGE_INVALID and DATE_RANGE_TOO_LONG on the parameter at fault', () => {
    expect(errorOf(() => parse({ startDate: '2026-11-01' }))).toMatchObject({ code: 'DATE_RANGE_INVALID', errors: { endDate: expect.any(Array) } });
    expect(errorOf(() => parse({ endDate: '2026-11-01' }))).toMatchObject({ code: 'DATE_RANGE_INVALID', errors: { startDate: expect.any(Array) } });
    expect(errorOf(() => parse({ period: '7d', startDate: '2026-11-01', endDate: '2026-11-02' }))).toMatchObject({
      code: 'DATE_RANGE_INVALID',
      errors: { period: expect.any(Array) },
    });
    expect(errorOf(() => parse({ startDate: '2026-11-02', endDate: '2026-11-01' }))).toMatchObject({
      code: 'DATE_RANGE_INVALID',
      errors: { startDate: expect.any(Array) },
    });
    // 3,661 days.
    expect(errorOf(() => parse({ startDate: '2016-11-18', endDate: '2026-11-26' }))).toMatchObject({
      code: 'DATE_RANGE_TOO_LONG',
      errors: { endDate: expect.any(Array) },
    });
  });

  it('list parameters pass through', () => {
    expect(parse({ page: 3, limit: 50, sortBy: 'pageviews', sortOrder: 'asc' })).toMatchObject({ page: 3, limit: 50, sortBy: 'pageviews', sortOrder: 'asc' });
  });
});
