import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { Executor } from '../../db/types.js';
import * as repo from './analytics.repository.js';
import { dateOfDay, localTime } from './analytics.time.js';

/**
 * Visitor ids without cookies (decisions A1, A4; design 1.3 step 7): the first 8 bytes of
 * HMAC-SHA256 keyed by the salt of the site's local date over site id, address and user agent,
 * as a signed 64-bit integer. The salt is 32 random bytes made on first use (insert-or-ignore,
 * so instances agree) and deleted two days later; once deleted, nobody can link an id to an
 * address again. The address itself is used here and nowhere stored.
 */
const SALT_DAYS_KEPT = 2;
const salts = new Map<string, Buffer>();

async function saltOf(db: Executor, siteId: string, date: string, day: number): Promise<Buffer> {
  const key = `${siteId}|${date}`;
  const known = salts.get(key);
  if (known) return known;
  let stored = await repo.findSalt(db, siteId, date);
  if (!stored) {
    await repo.insertSalt(db, siteId, date, randomBytes(32).toString('hex'));
    stored = (await repo.findSalt(db, siteId, date))!;
    // Time zones span UTC-12 to +14: two days back every local date of any site is still covered.
    await repo.deleteSaltsBefore(db, siteId, dateOfDay(day - SALT_DAYS_KEPT));
    for (const k of salts.keys()) if (k.startsWith(`${siteId}|`) && k.slice(siteId.length + 1) < dateOfDay(day - SALT_DAYS_KEPT)) salts.delete(k);
  }
  const salt = Buffer.from(stored, 'hex');
  if (salts.size > 100_000) salts.clear();
  salts.set(key, salt);
  return salt;
}

function visitorId(salt: Buffer, siteId: string, ip: string, userAgent: string): bigint {
  return createHmac('sha256', salt).update(`${siteId}\0${ip}\0${userAgent}`).digest().readBigInt64BE(0);
}

/**
 * The visitor's id under today's salt and under yesterday's (local dates), so a session open
 * across midnight continues (the 30-minute rule looks up both).
 */
export async function visitorIds(db: Executor, site: { id: string; timezone: string }, ip: string, userAgent: string, now: number): Promise<[bigint, bigint]> {
  const today = localTime(now, site.timezone);
  const [current, previous] = await Promise.all([saltOf(db, site.id, today.date, today.day), saltOf(db, site.id, dateOfDay(today.day - 1), today.day)]);
  return [visitorId(current, site.id, ip, userAgent), visitorId(previous, site.id, ip, userAgent)];
}

/** An imported visitor (design 1.5): the source already pseudonymised it, so no salt. */
export function importedVisitorId(siteId: string, visitorId: string): bigint {
  return createHash('sha256').update(`${siteId}\0import\0${visitorId}`).digest().readBigInt64BE(0);
}

/** Forgets the salts held in memory (tests: after the database's salts were changed). */
export function forgetSalts(): void {
  salts.clear();
}
