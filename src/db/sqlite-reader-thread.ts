import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_PRIORITY_SOURCE } from './background-thread.js';
import type { SqliteFunctionSpec } from './sqlite-functions.js';

/**
 * Reads that run on a thread of their own (decisions HN13): a statement of a full-text search
 * over many long posts takes 5-20 ms that no slicing can cut, and on the connection of the event
 * loop every other site's request waited behind it. A thread opens the file read-only (WAL:
 * it never waits for the writer and sees every commit, as the reader connection does), runs one
 * statement at a time and answers its rows; the event loop only waits for the message. Its cache
 * is SQLite's default and it maps no file, so it costs a few MB. It runs at a lower priority than
 * the loop (HN14): the searching tenant waits for a core, not every other site. A second thread
 * starts when reads overlap on a host with two cores or more (PF19).
 */
const WORKER_SOURCE = `${BACKGROUND_PRIORITY_SOURCE}
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 100');
const statements = new Map();
const defined = new Set();
// One message at a time, in order: defining a function imports its module first.
let queue = Promise.resolve();
parentPort.on('message', (m) => {
  queue = queue.then(() => answer(m));
});
async function answer({ id, sql, params, functions }) {
  try {
    for (const f of functions) {
      if (defined.has(f.name)) continue;
      db.function(f.name, { deterministic: true }, (await import(f.module))[f.exportName]);
      defined.add(f.name);
    }
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (statements.size >= 200) statements.delete(statements.keys().next().value);
      statements.set(sql, statement);
    }
    const started = performance.now();
    const rows = statement.all(...params);
    parentPort.postMessage({ id, rows, ms: performance.now() - started });
  } catch (err) {
    parentPort.postMessage({ id, error: { message: String(err && err.message), code: err && err.code } });
  }
}
`;

type Pending = { resolve: (rows: unknown[]) => void; reject: (err: Error) => void };
type Read = Pending & { id: number; sql: string; params: readonly unknown[]; functions: readonly SqliteFunctionSpec[] };

/** One thread and the reads it was given. */
interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Set when a newer thread takes the next reads: this one ends once its own are answered. */
  retired: boolean;
  /** How long the thread's last statement ran. */
  lastMs: number;
  /** A second thread's end when it stays idle (PF19). */
  idle: NodeJS.Timeout | null;
}

/**
 * Reader threads on this host: two where there are two cores or more (decisions PF19), one on a
 * single core, where a second thread would only take turns from the first.
 */
export const readerThreadsFor = (cores: number): number => Math.max(1, Math.min(2, cores));

export class SqliteReaderThread {
  /** The threads reads go to (a slot is null until a read needs it, and again after renew()). */
  private readonly threads: Array<Thread | null>;
  private nextId = 1;
  /** Reads not yet given to a thread (decisions HN18, PF17, PF19): those that start a request... */
  private readonly queued: Read[] = [];
  /** ...and those that continue one, given first (PF20). */
  private readonly followUps: Read[] = [];
  /** Reads given to a thread and not answered yet. */
  private inFlight = 0;
  /** The pause after a read is running: nothing is given to a thread until it ends. */
  private pause: NodeJS.Timeout | null = null;
  private closed = false;

  /**
   * `pauseAfter`: how long the next read waits after one that ran `ms` on a thread (the app
   * gives the heavy-work lane's rule, decisions HN18; none by default). Asked about a read of no
   * length, it says whether other requests are arriving now (a pause) or not (none).
   * `threads`: at most this many threads (readerThreadsFor the host's cores by default).
   * `idleMs`: a thread other than the first ends after this long without a read; it holds about
   * 17 MB while it runs.
   */
  constructor(
    private readonly file: string,
    private readonly pauseAfter: (ms: number) => number = () => 0,
    threads = readerThreadsFor(availableParallelism()),
    private readonly idleMs = 10_000,
  ) {
    this.threads = Array.from({ length: threads }, () => null);
  }

  /**
   * The rows of a statement that only reads, run on a thread (started on first use), with the
   * functions it calls defined there first (sqlite-functions.ts). `followUp`: the read continues
   * a request that already had a read answered, and goes before those that start one: a search
   * of three reads then waits for the threads about once, not three times behind every other
   * search's first read (decisions PF20).
   */
  all(sql: string, params: readonly unknown[], functions: readonly SqliteFunctionSpec[] = [], followUp = false): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      (followUp ? this.followUps : this.queued).push({ id: this.nextId++, sql, params, functions, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Gives the threads the reads they may have now. While other requests arrive, one at a time in
   * all, each after the pause the last one earned (`pauseAfter`): a thread's core is the one the
   * clients, the kernel and the loop share on a small host, and a thread kept busy by one
   * tenant's searches took it from every other site (decisions HN18). With nothing else
   * arriving, two to each thread: a thread starts its second as soon as it answers the first,
   * instead of idling until the event loop has read that answer and sent the next read (PF17),
   * and the threads run side by side on the cores the loop leaves (PF19).
   */
  private dispatch(): void {
    if (this.closed) for (const queued of [...this.followUps.splice(0), ...this.queued.splice(0)]) queued.reject(new Error('the database is closed'));
    while (this.pause === null && this.followUps.length + this.queued.length > 0 && this.inFlight < (this.pauseAfter(0) > 0 ? 1 : 2 * this.threads.length))
      this.give(this.followUps.shift() ?? this.queued.shift()!);
  }

  /**
   * The thread for the next read: an idle running one, else one not started yet, else the
   * running one with the fewest reads. A second thread starts only when reads overlap.
   */
  private threadForRead(): Thread {
    let slot = -1;
    let fewest = Number.POSITIVE_INFINITY;
    for (const [i, thread] of this.threads.entries()) {
      // An idle running thread counts less than a new one, which counts less than a busy one.
      const load = thread ? (thread.pending.size ? thread.pending.size + 1 : 0) : 1;
      if (load < fewest) [slot, fewest] = [i, load];
    }
    return this.threads[slot] ?? this.start(slot);
  }

  private give(read: Read): void {
    this.inFlight++;
    const thread = this.threadForRead();
    if (thread.idle) clearTimeout(thread.idle);
    thread.idle = null;
    // A pending read keeps the process alive (a script awaiting it); an idle thread does not.
    if (!thread.pending.size) thread.worker.ref();
    const answered = (ms: number) => {
      this.inFlight--;
      const pause = this.pauseAfter(ms);
      if (pause > 0) {
        // The last read's pause counts from its own end.
        if (this.pause) clearTimeout(this.pause);
        this.pause = setTimeout(() => {
          this.pause = null;
          this.dispatch();
        }, pause);
      } else this.dispatch();
    };
    thread.pending.set(read.id, {
      resolve: (rows) => {
        read.resolve(rows);
        answered(thread.lastMs);
      },
      reject: (err) => {
        read.reject(err);
        answered(0);
      },
    });
    const functions = read.functions.map(({ name, module, exportName }) => ({ name, module, exportName }));
    thread.worker.postMessage({ id: read.id, sql: read.sql, params: read.params, functions });
  }

  /**
   * The next reads go to new threads (a new connection loads the planner's statistics, which a
   * connection reads only when it opens); the running ones end when their reads are answered.
   */
  renew(): void {
    for (const [i, thread] of this.threads.entries()) {
      if (!thread) continue;
      this.threads[i] = null;
      thread.retired = true;
      if (!thread.pending.size) void thread.worker.terminate();
    }
  }

  private start(slot: number): Thread {
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file: this.file, module } });
    const thread: Thread = { worker, pending: new Map(), retired: false, lastMs: 0, idle: null };
    worker.unref();
    worker.on('message', (m: { id: number; rows?: unknown[]; ms?: number; error?: { message: string; code?: string } }) => {
      const waiting = thread.pending.get(m.id);
      if (!waiting) return;
      thread.lastMs = m.ms ?? 0;
      thread.pending.delete(m.id);
      if (!thread.pending.size) {
        if (thread.retired) void worker.terminate();
        else {
          worker.unref();
          if (slot > 0) thread.idle = setTimeout(() => this.endIdle(slot, thread), this.idleMs).unref();
        }
      }
      if (m.error) waiting.reject(Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {}));
      else waiting.resolve(m.rows ?? []);
    });
    const fail = (err: Error) => {
      // A dead thread fails the reads it held; the next read starts another.
      if (this.threads[slot] === thread) this.threads[slot] = null;
      for (const waiting of thread.pending.values()) waiting.reject(err);
      thread.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the reader thread exited with ${code}`)));
    this.threads[slot] = thread;
    return thread;
  }

  /** Ends a thread that answered its last read idleMs ago and was given none since. */
  private endIdle(slot: number, thread: Thread): void {
    if (this.threads[slot] !== thread || thread.pending.size) return;
    this.threads[slot] = null;
    void thread.worker.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pause) clearTimeout(this.pause);
    this.pause = null;
    this.dispatch();
    const running = this.threads.filter((thread): thread is Thread => thread !== null);
    this.threads.fill(null);
    await Promise.all(running.map((thread) => thread.worker.terminate()));
  }
}
