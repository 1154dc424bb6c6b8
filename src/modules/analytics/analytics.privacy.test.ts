import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { batch, collector, flush, publicKey, sessionsOf } from '../../../test/helpers/analytics.js';
import { TEST_DIALECT } from '../../../test/helpers/app.js';
import { buildMmdb } from '../../../test/helpers/mmdb.js';
import { useTestApp } from '../../../test/helpers/suite.js';

/** A tiny geo database made here: two networks of made-up facts, in MaxMind's and in DB-IP's record shape. */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-geo-'));
const geoFile = path.join(dir, 'test-city.mmdb');
fs.writeFileSync(
  geoFile,
  buildMmdb({
    '81.2.69.0/24': { country: { iso_code: 'GB' }, city: { names: { en: 'London' } } },
    '8.8.8.0/24': { country_code: 'US', city: 'Mountain View' },
    '10.0.0.0/8': { country_code: 'AU', city: 'Private' },
    '100.64.0.0/10': { country_code: 'AU', city: 'Carrier NAT' },
  }),
);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Every log line the app writes, at the most verbose level. */
const logLines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    logLines.push(chunk.toString());
    done();
  },
});

const ctx = useTestApp(
  {
    analytics: { rateLimitMax: 600, siteMaxEventsPerMin: 60_000, flushMs: 250, flushEvents: 2000, maxQueuedEvents: 100_000, geoIpDb: geoFile },
    logLevel: 'trace',
  },
  { logger: { level: 'trace', stream: logStream } as never },
);
const PAGE = 'https://example.test/';

describe('analytics geo (decisions A10)', () => {
  it('looks public unicast addresses up in the MMDB file (both record shapes) and never private or shared ones', async () => {
    const api = await ctx.site();
    const send = collector(ctx.app, await publicKey(api));
    for (const ip of ['81.2.69.142', '8.8.8.8', '10.1.2.3', '100.64.1.1', '1.1.1.1', '::ffff:81.2.69.1']) {
      expect((await send(batch(PAGE, [{ t: 'pageview' }]), { ip })).status).toBe(202);
    }
    await flush(ctx.app);
    const sessions = await sessionsOf(ctx.app, api.siteId);
    expect(sessions.map((s) => [s.country, s.city])).toEqual([
      ['GB', 'London'],
      ['US', 'Mountain View'],
      [null, null],
      [null, null],
      [null, null],
      ['GB', 'London'],
    ]);
  });
});

describe('the client address is never written (decisions A4)', () => {
  const ADDRESSES = ['81.2.69.99', '2a02:8070:1234:5678::abcd'];

  it('is in no table, file, log line or answer', async () => {
    const api = await ctx.site();
    const key = await publicKey(api);
    const send = collector(ctx.app, key);
    await api.put('/v1/analytics/settings', { excludedPaths: ['/private/**'] });
    const answers: string[] = [];
    for (const ip of ADDRESSES) {
      answers.push((await send(batch(`${PAGE}?utm_source=x`, [{ t: 'pageview' }, { t: 'click', x: 0.5, y: 3, sel: '#buy' }]), { ip })).raw);
      answers.push((await send(batch(`${PAGE}private/x`, [{ t: 'pageview' }]), { ip })).raw);
      answers.push((await send(batch(PAGE, [{ t: 'pageview' }]), { ip, ua: 'Googlebot/2.1' })).raw);
      answers.push(
        (
          await send(
            batch(
              PAGE,
              Array.from({ length: 51 }, () => ({ t: 'pageview' })),
            ),
            { ip },
          )
        ).raw,
      );
      answers.push((await send('{broken', { ip })).raw);
      answers.push((await collector(ctx.app, 'pk_nonexistentnonexistentnonexist')(batch(PAGE, [{ t: 'pageview' }]), { ip })).raw);
    }
    await flush(ctx.app);
    expect(await sessionsOf(ctx.app, api.siteId)).toHaveLength(2);
    const haystacks: Array<[string, string]> = [
      ['answers', answers.join('\n')],
      ['logs', logLines.join('')],
    ];
    expect(logLines.some((l) => l.includes('/v1/public/analytics/events'))).toBe(true);
    if (TEST_DIALECT === 'sqlite') {
      await sql`pragma wal_checkpoint(TRUNCATE)`.execute(ctx.app.database.db);
      const file = ctx.config.databaseUrl;
      for (const suffix of ['', '-wal']) {
        if (fs.existsSync(file + suffix)) haystacks.push([`file${suffix}`, fs.readFileSync(file + suffix).toString('latin1')]);
      }
    } else {
      // Every row of every table of the test's schema, as text.
      const { rows: tables } = await sql<{
        table_name: string;
      }>`select table_name from information_schema.tables where table_schema = ${ctx.config.pgSchema!}`.execute(ctx.app.database.db);
      expect(tables.length).toBeGreaterThan(20);
      for (const { table_name } of tables) {
        const { rows } = await sql<{ row: string }>`select t::text as row from ${sql.table(table_name)} t`.execute(ctx.app.database.db);
        haystacks.push([table_name, rows.map((r) => r.row).join('\n')]);
      }
    }
    const forms = (ip: string) => [ip, ip.replace(/::/, ':0:'), Buffer.from(ip).toString('hex')];
    for (const [where, text] of haystacks) {
      for (const ip of ADDRESSES) for (const form of forms(ip)) expect(text.includes(form), `${form} in ${where}`).toBe(false);
    }
    // The search can find an address: other routes log theirs (so the collector's absence is its own doing).
    await ctx.app.inject({ method: 'GET', url: '/health', remoteAddress: '81.2.69.200' });
    expect(logLines.join('').includes('81.2.69.200')).toBe(true);
  });
});
