import { parentPort } from 'node:worker_threads';
import { richTextFromInput } from './index.js';

/** The rendering thread of render-pool.ts: one input at a time, answered with its id. */
parentPort?.on('message', (task: { id: number; input: Parameters<typeof richTextFromInput>[0] }) => {
  try {
    parentPort!.postMessage({ id: task.id, result: richTextFromInput(task.input) });
  } catch (err) {
    parentPort!.postMessage({ id: task.id, error: err instanceof Error ? err.message : String(err) });
  }
});
