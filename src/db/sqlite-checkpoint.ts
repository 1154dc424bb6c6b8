import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_PRIORITY_SOURCE } from './background-thread.js';

/**
 * WAL checkpoints off the event loop (issue 16 item 6, decisions H28). SQLite's automatic
 * checkpoint runs inside the COMMIT that takes the WAL past 1,000 pages: it copies the WAL into
 * the database file and syncs it, on the committing connection, so on this service's one writer
 * it froze every request of every site for ~80 ms after a large write (a 950 KB post: commit
 * 100 ms, 20 ms without). Here the writer's automatic checkpoint is off and a thread of its own,
 * on its own connection at a lower priority, checkpoints every `intervalMs` (PASSIVE: it never
 * waits for, nor blocks, the writer or the readers). When the thread dies, the writer's automatic
 * checkpoint comes back.
 */
const WORKER_SOURCE = `${BACKGROUND_PRIORITY_SOURCE}
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const tick = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    // Busy (another process checkpoints, WAL recovery): the next tick tries again.
    if (!/busy|locked/i.test(String(err && err.code) + String(err && err.message))) throw err;
  }
};
const timer = setInterval(tick, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m === 'stop') {
    clearInterval(timer);
    tick();
    db.close();
    parentPort.postMessage('stopped');
  }
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/** Starts checkpointing `file` on a thread; `onExit` runs if the thread dies (not on stop). */
export function startCheckpointer(file: string, intervalMs: number, onExit: (err: Error | null) => void): Checkpointer {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, module, intervalMs } });
  // The checkpoints never keep the process alive.
  worker.unref();
  let stopping = false;
  worker.on('error', (err) => {
    if (!stopping) onExit(err);
  });
  worker.on('exit', (code) => {
    if (!stopping) onExit(code === 0 ? null : new Error(`the checkpoint thread exited with ${code}`));
  });
  return {
    async stop() {
      if (stopping) return;
      stopping = true;
      const done = new Promise<void>((resolve) => {
        worker.once('message', () => resolve());
        worker.once('exit', () => resolve());
      });
      worker.postMessage('stop');
      await Promise.race([done, new Promise((r) => setTimeout(r, 2000))]);
      await worker.terminate();
    },
  };
}
