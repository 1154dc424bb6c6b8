/**
 * Longest piece of a heavy request's work between turns of the event loop: another site's read
 * (1-2 ms alone, p99 about 5-10 ms on this 2-core machine) waits at most this behind each heavy
 * request in flight (decisions HN7, HN11: 8 ms, then 3; two heavy loops made the neighbour's p99 4-8x).
 */
export const SLICE_MS = 1;

/** Heavy work waiting for its next piece, first come first served (decisions HN11). */
const waiting: Array<() => void> = [];
let resumeQueued = false;

function resumeOne(): void {
  resumeQueued = false;
  const next = waiting.shift();
  if (waiting.length) queueResume();
  next?.();
}

/** When a request last arrived (noteArrival). */
let lastArrival = Number.NEGATIVE_INFINITY;

/**
 * Other requests arrived this recently: heavy work then leaves the event loop idle for about as
 * long as its last piece (a 1 ms timer), so their sockets are read as they arrive instead of
 * after the piece (decisions HN11). On a server with nothing else to do it runs at full speed.
 */
const SHARING_WINDOW_MS = 5;

/** Called as each request arrives (the first onRequest hook): one clock read. */
export function noteArrival(): void {
  lastArrival = performance.now();
}

function queueResume(): void {
  resumeQueued = true;
  if (performance.now() - lastArrival < SHARING_WINDOW_MS) setTimeout(resumeOne, 1);
  else setImmediate(resumeOne);
}

/**
 * A turn of the event loop for heavy work: resolves in a later turn, and at most one heavy piece
 * resumes per turn, whatever number are in flight (decisions HN11). Each turn first reads the
 * sockets, so another site's request waits behind one piece of heavy work, not one per heavy
 * request in flight (two loops of imports put two or three 3 ms pieces between its reads).
 */
export function heavyTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!resumeQueued) queueResume();
  });
}

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
