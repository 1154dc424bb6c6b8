import { vi } from 'vitest';

/**
 * The longest the event loop was held while it ran (every other request waits that long): the
 * largest gap between ticks of a timer of `everyMs`, up to `stop()`.
 */
export function watchStalls(everyMs: number): { stop(): number } {
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(longest, performance.now() - last);
    },
  };
}

/**
 * The turns the event loop takes while `work` runs, with the clock made to advance 0.25 ms a
 * reading (so the machine's load cannot decide the count): each slice of heavy work
 * (time-slice.ts) then ends after SLICE_MS / 0.25 readings.
 */
export async function countTurns<T>(work: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let counting = true;
  const tick = () => {
    turns += 1;
    if (counting) setImmediate(tick);
  };
  let clock = performance.now();
  const now = vi.spyOn(performance, 'now').mockImplementation(() => (clock += 0.25));
  try {
    setImmediate(tick);
    return { value: await work(), turns };
  } finally {
    now.mockRestore();
    counting = false;
  }
}
