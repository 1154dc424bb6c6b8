import { heavyTurn } from '../db/turns.js';

/**
 * Longest piece of a heavy request's work between turns of the event loop: another site's read
 * (1-2 ms alone, p99 about 5-10 ms on this 2-core machine) waits at most this behind each heavy
 * request in flight (decisions HN7; 8 ms before, and two heavy loops made the neighbour's p99 4-8x).
 */
export const SLICE_MS = 1;

/**
 * A long synchronous loop (an import's row checks) gives the event loop a turn every `sliceMs`
 * of work: `const slice = timeSlicer(); for (...) { await slice(); ... }`. Other sites' requests
 * then wait at most one slice behind it, not the whole loop (decisions HN6). Awaiting costs
 * nothing until the slice is used up.
 */
export function timeSlicer(sliceMs = SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return heavyTurn().then(() => {
      since = performance.now();
    });
  };
}
