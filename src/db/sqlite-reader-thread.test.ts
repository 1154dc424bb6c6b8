import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FIXTURE_MODULE, threadIdOf, where } from '../../test/helpers/sqlite-function-fixture.js';
import { watchStalls } from '../../test/helpers/stalls.js';
import { connectDatabase } from './connect.js';
import { heavyPauseMs, noteArrival } from '../shared/time-slice.js';
import { followUp, prepared } from './prepared.js';
import { readerThreadsFor, SqliteReaderThread } from './sqlite-reader-thread.js';

/** The longest the event loop went without a turn while `work` ran (a 1 ms timer's largest gap). */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  const stalls = watchStalls(1);
  await work();
  return stalls.stop();
}

/** A statement that counts to `n` (about 50-150 ms of SQLite work at a million), with `extra` columns first. */
const countTo = (n: number, extra = '') => `with recursive r(i) as (select 1 union all select i + 1 from r where i < ${n}) select ${extra}count(*) as n from r`;

/**
 * A reader paced as the app paces it (heavyPauseMs). While `arriving(true)`, a request arrives
 * just as each read ends (a 1 ms interval of arrivals missed the 5 ms sharing window when a loaded
 * CI machine ran the tests late).
 */
function pacedReader(file: string, threads: number, idleMs?: number) {
  let arriving = false;
  const reader = new SqliteReaderThread(
    file,
    (ms) => {
      if (arriving) noteArrival();
      return heavyPauseMs(ms);
    },
    threads,
    idleMs,
  );
  return {
    reader,
    arriving(on: boolean) {
      arriving = on;
      if (on) noteArrival();
    },
  };
}

describe('reads marked offLoop run on the reader thread (decisions HN13)', () => {
  const file = path.join(os.tmpdir(), `cairn-reader-thread-${randomUUID()}.db`);
  const database = connectDatabase({ databaseUrl: file });
  afterAll(async () => {
    await database.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  });
  // About 100-300 ms of SQLite work in one statement: nothing can slice it.
  const slowCount = (offLoop: boolean) =>
    prepared(
      (_db, p: { n: number }) =>
        sql<{ n: number }>`with recursive r(i) as (select 1 union all select i + 1 from r where i < ${p.n}) select count(*) as n from r`,
      { offLoop },
    );

  it('answers the same rows while the event loop keeps turning; unmarked, the statement holds the loop', async () => {
    const inline = slowCount(false);
    const threaded = slowCount(true);
    let inlineRows: unknown;
    let threadedRows: unknown;
    await threaded.execute(database.db, { n: 10 }); // the thread starts
    const held = await longestStall(async () => {
      inlineRows = await inline.execute(database.db, { n: 2_000_000 });
    });
    const free = await longestStall(async () => {
      threadedRows = await threaded.execute(database.db, { n: 2_000_000 });
    });
    expect(threadedRows).toEqual([{ n: 2_000_000 }]);
    expect(threadedRows).toEqual(inlineRows);
    expect(held).toBeGreaterThan(50);
    expect(free).toBeLessThan(held / 3);
  });

  it('sees every commit of the writer, and reports a failing statement as an error', async () => {
    await sql`create table notes (id integer primary key, body text not null)`.execute(database.db);
    const count = prepared((_db, _p: Record<string, never>) => sql<{ n: number }>`select count(*) as n from notes`, { offLoop: true });
    expect(await count.executeTakeFirst(database.db, {})).toEqual({ n: 0 });
    await sql`insert into notes (body) values ('one'), ('two')`.execute(database.db);
    expect(await count.executeTakeFirst(database.db, {})).toEqual({ n: 2 });
    const broken = prepared((_db, _p: Record<string, never>) => sql`select * from no_such_table`, { offLoop: true });
    await expect(broken.execute(database.db, {})).rejects.toThrow(/no such table/);
    // The thread is still there for the next read.
    await sql`insert into notes (body) values ('three')`.execute(database.db);
    expect(await count.executeTakeFirst(database.db, {})).toEqual({ n: 3 });
  });

  it('defines the JavaScript functions a statement calls where it runs: on the thread when off the loop (decisions HN15)', async () => {
    const functions = [{ name: 'cairn_where', fn: where, module: FIXTURE_MODULE, exportName: 'where' }];
    const statement = (offLoop: boolean) =>
      prepared((_db, p: { label: string }) => sql<{ at: string }>`select cairn_where(${p.label}) as at`, { offLoop, functions });
    expect(await statement(true).execute(database.db, { label: 'first' })).toEqual([{ at: 'first on a thread' }]);
    expect(await statement(true).execute(database.db, { label: 'again' })).toEqual([{ at: 'again on a thread' }]);
    expect(await statement(false).execute(database.db, { label: 'inline' })).toEqual([{ at: 'inline on the event loop' }]);
    // A module the thread cannot load fails that statement only, with the import's error.
    const missing = prepared((_db, _p: Record<string, never>) => sql`select cairn_missing() as x`, {
      offLoop: true,
      functions: [{ name: 'cairn_missing', fn: where, module: new URL('./no-such-module.ts', FIXTURE_MODULE).href, exportName: 'where' }],
    });
    await expect(missing.execute(database.db, {})).rejects.toThrow(/no-such-module/);
    expect(await statement(true).execute(database.db, { label: 'after' })).toEqual([{ at: 'after on a thread' }]);
  });

  // Linux keeps a nice value per thread (/proc/self/task/<tid>/stat, field 19).
  const niceOf = (tid: string) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  };
  it.runIf(process.platform === 'linux')('runs 10 nice steps below the event loop (decisions HN14)', async () => {
    await sql`select 1`.execute(database.db); // the connection's own threads exist before
    const before = new Set(readdirSync('/proc/self/task'));
    const reader = new SqliteReaderThread(file);
    try {
      expect(await reader.all('select 7 as n', [])).toEqual([{ n: 7 }]);
      const loop = niceOf(String(process.pid));
      const started = readdirSync('/proc/self/task').filter((tid) => !before.has(tid));
      expect(started.map(niceOf)).toContain(Math.min(19, loop + 10));
      expect(niceOf(String(process.pid))).toBe(loop);
    } finally {
      await reader.close();
    }
  });

  it('gives the thread two reads while nothing else arrives, and while requests arrive one at a time, pausing between them as the heavy-work lane does (decisions HN18, PF17)', async () => {
    // One thread: what it is given (two threads, PF19, are the next test's).
    const { reader, arriving } = pacedReader(file, 1);
    const read = (n: number) => reader.all(countTo(n), []);
    /**
     * Two reads given together while the event loop is busy elsewhere for long enough to run both
     * (other requests' work): the time from the first answer to the second. About nothing when the
     * thread ran the second meanwhile; the second's own run when it was given only after the loop
     * had read the first answer.
     */
    const secondAfterFirst = async (n: number, busyMs: number) => {
      const first = read(n).then(() => performance.now());
      const second = read(n).then(() => performance.now());
      const from = performance.now();
      while (performance.now() - from < busyMs);
      return (await second) - (await first);
    };
    try {
      await read(10); // the thread starts
      // About 50-150 ms of SQLite work; its time alone, as the loop sees it.
      const n = 1_000_000;
      const started = performance.now();
      await read(n);
      const runMs = performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 10)); // no request arrived lately
      let timers = vi.spyOn(globalThis, 'setTimeout');
      try {
        const gap = await secondAfterFirst(n, 3 * runMs + 100);
        // Nothing else arriving: no timer, and the second ran while the loop was busy.
        expect(timers).not.toHaveBeenCalled();
        expect(gap).toBeLessThan(runMs / 2);
      } finally {
        timers.mockRestore();
      }

      arriving(true);
      timers = vi.spyOn(globalThis, 'setTimeout');
      try {
        const gap = await secondAfterFirst(n, 3 * runMs + 100);
        // Requests arriving: the second is given after the first's answer and a pause of three
        // times its length (1-20 ms).
        expect(gap).toBeGreaterThan(runMs / 2);
        const pauses = timers.mock.calls.map(([, ms]) => ms);
        expect(pauses).toHaveLength(2);
        for (const pause of pauses) expect(pause).toBeGreaterThanOrEqual(1);
        for (const pause of pauses) expect(pause).toBeLessThanOrEqual(20);
      } finally {
        timers.mockRestore();
        arriving(false);
      }
    } finally {
      await reader.close();
    }
  });

  it('runs overlapping reads on two threads while nothing else arrives, and on one, one at a time, while requests arrive (decisions PF19)', async () => {
    const { reader, arriving } = pacedReader(file, 2, 200);
    const functions = [{ name: 'cairn_thread_id', fn: threadIdOf, module: FIXTURE_MODULE, exportName: 'threadIdOf' }];
    const threadOf = async (n: number) => {
      const [row] = (await reader.all(countTo(n, 'cairn_thread_id() as thread, '), [], functions)) as Array<{ thread: number; n: number }>;
      expect(row!.n).toBe(n);
      return row!.thread;
    };
    try {
      // Reads one after the other: one thread, started by the first.
      const first = await threadOf(10);
      expect(await threadOf(10)).toBe(first);
      await new Promise((resolve) => setTimeout(resolve, 10)); // no request arrived lately
      // Two reads at once with nothing else arriving: the second starts a second thread.
      const together = await Promise.all([threadOf(200_000), threadOf(200_000)]);
      expect(together).toContain(first);
      expect(new Set(together).size).toBe(2);
      // Requests arriving: one read at a time, each given to the first idle thread.
      arriving(true);
      const paced = await Promise.all([threadOf(200_000), threadOf(200_000), threadOf(10)]);
      expect(new Set(paced).size).toBe(1);
      arriving(false);
      // The second thread ends after idleMs without a read; the next overlap starts another.
      await new Promise((resolve) => setTimeout(resolve, 400));
      const later = await Promise.all([threadOf(200_000), threadOf(200_000)]);
      expect(later).toContain(first);
      const second = together.find((id) => id !== first);
      expect(later.find((id) => id !== first)).toBeGreaterThan(second!);
    } finally {
      arriving(false);
      await reader.close();
    }
  });

  it('has two threads on a host of two cores or more, one on a single core (decisions PF19)', () => {
    expect([1, 2, 4, 64].map(readerThreadsFor)).toEqual([1, 2, 2, 2]);
    expect(readerThreadsFor(0)).toBe(1);
  });

  it('gives reads that continue a request before those that start one (decisions PF20)', async () => {
    const reader = new SqliteReaderThread(file, () => 0, 1);
    const done: string[] = [];
    const read = (label: string, n: number, continues = false) => reader.all(countTo(n), [], [], continues).then(() => done.push(label));
    try {
      await read('warm', 10); // the thread starts
      // The thread holds two reads (PF17); the next two wait, the second a follow-up.
      await Promise.all([read('first', 300_000), read('second', 300_000), read('starts', 10), read('continues', 10, true)]);
      expect(done).toEqual(['warm', 'first', 'second', 'continues', 'starts']);
    } finally {
      await reader.close();
    }
    // prepared() marks the statements: the SQLite driver hands the mark to the threads.
    const options = { offLoop: true, followUp: true };
    const continuing = prepared((_db, _p: Record<string, never>) => sql`select 1`, options);
    const starting = prepared((_db, _p: Record<string, never>) => sql`select 1`, { offLoop: true });
    expect(followUp(continuing.compile(database.db, {}))).toBe(true);
    expect(followUp(starting.compile(database.db, {}))).toBe(false);
  });
});
