/**
 * Longest piece of a heavy request's work between turns of the event loop: another site's read
 * (1-2 ms alone, p99 about 5-10 ms on this 2-core machine) waits at most this behind each heavy
 * request in flight (decisions HN7, HN11: 8 ms, then 3; two heavy loops made the neighbour's p99 4-8x).
 */
export const SLICE_MS = 1;

/** Heavy work waiting for its next piece, first come first served (decisions HN11). */
const waiting: Array<{ resume: () => void; holdsWriter: boolean }> = [];
let resumeQueued = false;

/** When the lane last resumed a piece (0 once its end was seen), and how long the last piece ran. */
let pieceStartedAt = 0;
let lastPieceMs = SLICE_MS;

function resumeOne(): void {
  resumeQueued = false;
  const next = waiting.shift();
  if (waiting.length) queueResume();
  pieceStartedAt = performance.now();
  next?.resume();
}

/** When a request last arrived (noteArrival). */
let lastArrival = Number.NEGATIVE_INFINITY;

/**
 * Other requests arrived this recently: heavy work then leaves the event loop idle for about as
 * long as its last piece (a 1 ms timer), so their sockets are read as they arrive instead of
 * after the piece (decisions HN11). On a server with nothing else to do it runs at full speed.
 */
const SHARING_WINDOW_MS = 5;

/**
 * While others share the loop, the lane waits this many times as long as its last piece ran
 * before the next one (at least 1 ms, at most PAUSE_MAX_MS): heavy work then has at most a
 * quarter of the loop, every other request the rest (decisions HN16). With a fixed 1 ms pause it
 * had half, and two loops of imports doubled another site's p50. A piece that holds SQLite's one
 * writer (inside a write transaction) resumes after one turn instead (decisions AN17).
 */
const PAUSE_PER_BUSY = 3;
const PAUSE_MAX_MS = 20;

/** Called as each request arrives (the first onRequest hook): one clock read. */
export function noteArrival(): void {
  lastArrival = performance.now();
}

/** When a request that heavy work yields to last arrived (`performance.now()`; tests read it). */
export const lastArrivalAt = (): number => lastArrival;

/** Requests other than the heavy work's own keep arriving (SHARING_WINDOW_MS). */
const sharing = () => performance.now() - lastArrival < SHARING_WINDOW_MS;

/** The pause after a piece of `pieceMs` while others share the loop (PAUSE_PER_BUSY). */
const pauseAfter = (pieceMs: number) => Math.min(PAUSE_MAX_MS, Math.max(1, Math.round(pieceMs * PAUSE_PER_BUSY)));

/**
 * How long heavy work that just ran `ms` off the event loop (a statement on the reader thread)
 * waits before its next piece: nothing with no other request arriving, else as the lane pauses
 * (decisions HN18).
 */
export function heavyPauseMs(ms: number): number {
  return sharing() ? pauseAfter(ms) : 0;
}

function queueResume(): void {
  resumeQueued = true;
  // A piece that holds SQLite's one writer resumes after one turn (the sockets read, no timer):
  // paused longer, it would hold every other site's writes back longer (decisions AN17).
  if (!waiting[0]?.holdsWriter && sharing()) setTimeout(resumeOne, pauseAfter(lastPieceMs));
  else setImmediate(resumeOne);
}

/**
 * A turn of the event loop for heavy work: resolves in a later turn, and at most one heavy piece
 * resumes per turn, whatever number are in flight (decisions HN11). Each turn first reads the
 * sockets, so another site's request waits behind one piece of heavy work, not one per heavy
 * request in flight (two loops of imports put two or three 3 ms pieces between its reads).
 */
export function heavyTurn(holdsWriter = false): Promise<void> {
  if (pieceStartedAt) {
    // The piece the lane resumed last ends here, or another heavy request starts after the last
    // piece finished its own (then the gap overstates the piece: the pause is bounded anyway).
    lastPieceMs = performance.now() - pieceStartedAt;
    pieceStartedAt = 0;
  }
  return new Promise((resolve) => {
    waiting.push({ resume: resolve, holdsWriter });
    if (!resumeQueued) queueResume();
  });
}

/**
 * A long synchronous loop (an import's row checks) gives the event loop a turn every `sliceMs`
 * of work (`holdsWriter`: inside a write transaction, see PAUSE_PER_BUSY): `const slice = timeSlicer(); for (...) { await slice(); ... }`. Other sites' requests
 * then wait at most one slice behind it, not the whole loop (decisions HN6). Awaiting costs
 * nothing until the slice is used up.
 */
export function timeSlicer(sliceMs = SLICE_MS, holdsWriter = false): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return heavyTurn(holdsWriter).then(() => {
      since = performance.now();
    });
  };
}
