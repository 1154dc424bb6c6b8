import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_PRIORITY_SOURCE } from './background-thread.js';
import type { SqliteFunctionSpec } from './sqlite-functions.js';

/**
 * Reads that run on a thread of their own (decisions HN13): a statement of a full-text search
 * over many long posts takes 5-20 ms that no slicing can cut, and on the connection of the event
 * loop every other site's request waited behind it. The thread opens the file read-only (WAL:
 * it never waits for the writer and sees every commit, as the reader connection does), runs one
 * statement at a time and answers its rows; the event loop only waits for the message. Its cache
 * is SQLite's default and it maps no file, so it costs a few MB. It runs at a lower priority than
 * the loop (HN14): the searching tenant waits for a core, not every other site.
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
    parentPort.postMessage({ id, rows: statement.all(...params) });
  } catch (err) {
    parentPort.postMessage({ id, error: { message: String(err && err.message), code: err && err.code } });
  }
}
`;

type Pending = { resolve: (rows: unknown[]) => void; reject: (err: Error) => void };

/** One thread and the reads it was given. */
interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Set when a newer thread takes the next reads: this one ends once its own are answered. */
  retired: boolean;
}

export class SqliteReaderThread {
  private current: Thread | null = null;
  private nextId = 1;

  constructor(private readonly file: string) {}

  /**
   * The rows of a statement that only reads, run on the thread (started on first use), with the
   * functions it calls defined there first (sqlite-functions.ts).
   */
  all(sql: string, params: readonly unknown[], functions: readonly SqliteFunctionSpec[] = []): Promise<unknown[]> {
    const thread = this.current ?? this.start();
    const id = this.nextId++;
    // A pending read keeps the process alive (a script awaiting it); an idle thread does not.
    if (!thread.pending.size) thread.worker.ref();
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, sql, params, functions: functions.map(({ name, module, exportName }) => ({ name, module, exportName })) });
    });
  }

  /**
   * The next reads go to a new thread (a new connection loads the planner's statistics, which a
   * connection reads only when it opens); this one ends when its reads are answered.
   */
  renew(): void {
    const thread = this.current;
    if (!thread) return;
    this.current = null;
    thread.retired = true;
    if (!thread.pending.size) void thread.worker.terminate();
  }

  private start(): Thread {
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file: this.file, module } });
    const thread: Thread = { worker, pending: new Map(), retired: false };
    worker.unref();
    worker.on('message', (m: { id: number; rows?: unknown[]; error?: { message: string; code?: string } }) => {
      const waiting = thread.pending.get(m.id);
      if (!waiting) return;
      thread.pending.delete(m.id);
      if (!thread.pending.size) {
        if (thread.retired) void worker.terminate();
        else worker.unref();
      }
      if (m.error) waiting.reject(Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {}));
      else waiting.resolve(m.rows ?? []);
    });
    const fail = (err: Error) => {
      // A dead thread fails the reads it held; the next read starts another.
      if (this.current === thread) this.current = null;
      for (const waiting of thread.pending.values()) waiting.reject(err);
      thread.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the reader thread exited with ${code}`)));
    this.current = thread;
    return thread;
  }

  async close(): Promise<void> {
    const thread = this.current;
    this.current = null;
    if (thread) await thread.worker.terminate();
  }
}
