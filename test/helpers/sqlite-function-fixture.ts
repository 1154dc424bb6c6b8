import { isMainThread } from 'node:worker_threads';

/** SQL `cairn_where(label)`: where the statement calling it ran, for the SQL function tests (db/sqlite-functions.ts). */
export function where(label: string): string {
  return `${label} on ${isMainThread ? 'the event loop' : 'a thread'}`;
}

export const FIXTURE_MODULE = import.meta.url;
