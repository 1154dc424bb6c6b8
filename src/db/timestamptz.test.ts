import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isoFromTimestamptz } from './connect.js';

/** Decisions PF16: PostgreSQL's timestamptz text rearranged into ISO 8601, exactly as a Date would give it. */
const viaDate = (text: string) => (pg.types.getTypeParser(1184)(text) as Date).toISOString();

describe('timestamptz as ISO 8601 (decisions G8, PF16)', () => {
  it('gives what a Date gives for every form a UTC session writes, fraction cut to milliseconds', () => {
    const texts = [
      '2026-03-14 09:30:00+00',
      '2026-03-14 09:30:00.5+00',
      '2026-03-14 09:30:00.05+00',
      '2026-12-31 23:59:59.999999+00',
      '1970-01-01 00:00:00+00',
    ];
    for (let k = 0; k < 1000; k++) texts.push(`2026-03-14 09:30:00.${String(k).padStart(3, '0')}+00`);
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647);
    for (let i = 0; i < 2000; i++) {
      const digits = 1 + (next() % 6);
      const fraction = String(next() % 10 ** digits).padStart(digits, '0');
      const at = new Date(Date.UTC(1000 + (next() % 9000), next() % 12, 1 + (next() % 28), next() % 24, next() % 60, next() % 60)).toISOString();
      texts.push(`${at.slice(0, 10)} ${at.slice(11, 19)}.${fraction}+00`);
    }
    for (const text of texts) expect(isoFromTimestamptz(text, pg.types.getTypeParser(1184)), text).toBe(viaDate(text));
    expect(isoFromTimestamptz('2026-03-14 09:30:00.123456+00', () => new Date(0))).toBe('2026-03-14T09:30:00.123Z');
  });

  it('hands any other form to the parser: years before 1000, another offset', () => {
    for (const text of ['0999-03-14 09:30:00+00', '2026-03-14 09:30:00+02', '2026-03-14 09:30:00.25-05:30'])
      expect(isoFromTimestamptz(text, pg.types.getTypeParser(1184)), text).toBe(viaDate(text));
  });
});
