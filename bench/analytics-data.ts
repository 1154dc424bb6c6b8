/** What the analytics benches generate their events from: a deterministic generator and plausible values. */

/** A small deterministic generator (mulberry32). */
export function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export const COUNTRIES = 'US DE GB FR NL IN BR CA AU JP ES IT PL SE CH AT BE DK NO FI IE PT CZ RO HU GR TR MX AR ZA'.split(' ');
export const DEVICES = ['desktop', 'desktop', 'mobile', 'mobile', 'tablet'] as const;
export const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge', 'Mobile Safari'];
