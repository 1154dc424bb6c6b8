import { readlinkSync } from 'node:fs';
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { RENDER_THREAD_NICE, renderForWire } from './render-pool.js';

/**
 * Rendering yields the CPU to the event loop (decisions H24): on Linux this thread lowers its own
 * scheduling priority (nice 10; setpriority on a thread id applies to that thread only), so on a
 * machine with few cores the requests of other sites get the CPU before a 1 MB body being
 * rendered. Elsewhere the call fails and the thread keeps the process's priority.
 */
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (tid > 0) os.setPriority(tid, RENDER_THREAD_NICE);
} catch {
  // Not Linux: no per-thread priority.
}

/** The rendering thread of render-pool.ts: one input at a time, answered with its id. */
parentPort?.on('message', (task: { id: number; input: Parameters<typeof renderForWire>[0] }) => {
  try {
    parentPort!.postMessage({ id: task.id, result: renderForWire(task.input) });
  } catch (err) {
    parentPort!.postMessage({ id: task.id, error: err instanceof Error ? err.message : String(err) });
  }
});
