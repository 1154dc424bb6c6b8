import { describe, expect, it } from 'vitest';
import { localTime } from './analytics.time.js';

/** The local day, hour and date as Intl gives them for this one instant (the definition). */
const formats = new Map<string, Intl.DateTimeFormat>();
function fromIntl(ms: number, timezone: string) {
  const parts: Record<string, number> = {};
  let format = formats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', hourCycle: 'h23' });
    formats.set(timezone, format);
  }
  for (const p of format.formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const utc = Date.UTC(parts.year!, parts.month! - 1, parts.day!);
  return { day: Math.round(utc / 86_400_000), hour: parts.hour! % 24, date: new Date(utc).toISOString().slice(0, 10) };
}

describe('localTime', () => {
  // Whole-hour DST, half-hour DST (Lord Howe), quarter-hour offsets (Kathmandu, Chatham, Eucla),
  // a half-hour zone with DST (St John's), southern DST, and a zone of odd historical offsets.
  const zones = [
    'UTC',
    'Europe/Berlin',
    'America/New_York',
    'Australia/Lord_Howe',
    'Asia/Kathmandu',
    'Pacific/Chatham',
    'Australia/Eucla',
    'America/St_Johns',
    'America/Santiago',
    'Africa/Monrovia',
  ];

  it('answers what Intl answers for every instant, through offset changes (cached per quarter hour)', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const check = (ms: number, zone: string) => {
      const got = localTime(ms, zone);
      const want = fromIntl(ms, zone);
      if (got.day !== want.day || got.hour !== want.hour || got.date !== want.date) expect(got, `${zone} ${new Date(ms).toISOString()}`).toEqual(want);
    };
    const HOUR = 3_600_000;
    for (const zone of zones) {
      // Every hour of 2025, in order as a collector sees them; around every change of
      // offset (an hour whose local hour is not the last one's plus one), every 61 seconds.
      let last = fromIntl(Date.UTC(2025, 0, 1) - HOUR, zone).hour;
      for (let ms = Date.UTC(2025, 0, 1); ms < Date.UTC(2026, 0, 1); ms += HOUR) {
        const hour = fromIntl(ms, zone).hour;
        if (hour !== (last + 1) % 24) for (let m = ms - 2 * HOUR; m < ms + HOUR; m += 61_000) check(m, zone);
        check(ms + 1_234, zone);
        last = hour;
      }
      // And in random order over half a century (an import's timestamps), with milliseconds.
      for (let i = 0; i < 200; i++) {
        check(Math.floor(Date.UTC(1970, 0, 1) + random() * 50 * 365 * 86_400_000), zone);
      }
    }
  });

  it('is exact in a quarter hour that holds a change of offset off the quarter (Liberia, 1972: -0:44:30 to UTC)', () => {
    // The change came at 00:44:30 UTC on 1972-01-07: instants before it are 23:xx local on the 6th, after it 00:xx on the 7th.
    for (let ms = Date.UTC(1972, 0, 7, 0, 30); ms < Date.UTC(1972, 0, 7, 0, 50); ms += 7_000)
      expect(localTime(ms, 'Africa/Monrovia')).toEqual(fromIntl(ms, 'Africa/Monrovia'));
    expect(localTime(Date.UTC(1972, 0, 7, 0, 44, 29), 'Africa/Monrovia').date).toBe('1972-01-06');
    expect(localTime(Date.UTC(1972, 0, 7, 0, 44, 30), 'Africa/Monrovia').date).toBe('1972-01-07');
  });

  it('puts the hour before and after a change in the right local hour', () => {
    // Berlin, 2025-03-30: 01:59:59 UTC is 03:59:59 local (CEST), 00:59:59 UTC is 01:59:59 local (CET).
    expect(localTime(Date.UTC(2025, 2, 30, 0, 59, 59), 'Europe/Berlin').hour).toBe(1);
    expect(localTime(Date.UTC(2025, 2, 30, 1, 0, 0), 'Europe/Berlin').hour).toBe(3);
    // Kathmandu is UTC+5:45: 18:14:59 UTC is 23:59:59 local, 18:15 UTC the next day.
    expect(localTime(Date.UTC(2025, 5, 1, 18, 14, 59, 999), 'Asia/Kathmandu')).toEqual({
      day: localTime(Date.UTC(2025, 5, 1), 'UTC').day,
      hour: 23,
      date: '2025-06-01',
    });
    expect(localTime(Date.UTC(2025, 5, 1, 18, 15), 'Asia/Kathmandu')).toEqual({ day: localTime(Date.UTC(2025, 5, 2), 'UTC').day, hour: 0, date: '2025-06-02' });
  });
});
