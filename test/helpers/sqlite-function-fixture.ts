import { isMainThread, threadId } from 'node:worker_threads';

/** SQL `cairn_where(label)`: where the statement calling it ran, for the SQL function tests (db/sqlite-functions.ts). */
export function where(label: string): string {
  return `${label} on ${isMainThread ? 'the event loop' : 'a thread'}`;
}

/** SQL `cairn_thread_id()`: the id of the thread the statement calling it ran on (the reader thread tests). */
export function threadIdOf(): number {
  return threadId;
}

export const FIXTURE_MODULE = import.meta.url;
