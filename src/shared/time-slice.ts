import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * A long synchronous loop (an import's row checks) gives the event loop a turn every `sliceMs`
 * of work: `const slice = timeSlicer(); for (...) { await slice(); ... }`. Other sites' requests
 * then wait at most one slice behind it, not the whole loop (decisions HN6). Awaiting costs
 * nothing until the slice is used up.
 */
export function timeSlicer(sliceMs = 8): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return nextTurn().then(() => {
      since = performance.now();
    });
  };
}
