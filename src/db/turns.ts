/**
 * One lane for work that holds the event loop: a heavy request's pieces (shared/time-slice.ts)
 * and SQLite's slow statements (sqlite.ts) wait here for their next turn (decisions HN11).
 */

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
