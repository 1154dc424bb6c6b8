import { readdirSync } from 'node:fs';
import os from 'node:os';
import { RENDER_PROCESS_NICE, renderForWire } from './render-pool.js';

/**
 * The rendering process of render-pool.ts (decisions H24). On Linux every thread of this process
 * lowers its priority to RENDER_PROCESS_NICE: not only the thread that renders, but V8's
 * garbage-collection helper threads too, which a rendering *thread* shares with the event loop's
 * isolate at full priority (a 1 MB body makes seconds of garbage). Threads started later inherit it.
 */
try {
  for (const tid of readdirSync('/proc/self/task')) os.setPriority(Number(tid), RENDER_PROCESS_NICE);
} catch {
  // Not Linux: the process keeps its priority.
}

/** One input at a time, answered with its id; the process ends with its parent's channel. */
process.on('message', (task: { id: number; input: Parameters<typeof renderForWire>[0] }) => {
  try {
    process.send!({ id: task.id, result: renderForWire(task.input) });
  } catch (err) {
    process.send!({ id: task.id, error: err instanceof Error ? err.message : String(err) });
  }
});
process.on('disconnect', () => process.exit(0));
