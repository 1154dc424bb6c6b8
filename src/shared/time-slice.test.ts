import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { heavyPauseMs, heavyTurn, noteArrival } from './time-slice.js';

/** Counts turns of the event loop (one setImmediate chain) until stopped. */
function countTurns() {
  let turn = 0;
  let running = true;
  const tick = () => {
    turn++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turn() {
      return turn;
    },
    stop() {
      running = false;
    },
  };
}

describe('the heavy-work lane (decisions HN11)', () => {
  it('resumes one piece per turn of the event loop, first come first served', async () => {
    await sleep(10); // no request arrived lately: turns, not timers
    const turns = countTurns();
    const resumed: Array<{ piece: number; turn: number }> = [];
    await Promise.all([1, 2, 3].map((piece) => heavyTurn().then(() => resumed.push({ piece, turn: turns.turn }))));
    turns.stop();
    expect(resumed.map((r) => r.piece)).toEqual([1, 2, 3]);
    // Each its own turn: before, every waiter's setImmediate ran in the same one.
    expect(new Set(resumed.map((r) => r.turn)).size).toBe(3);
  });

  it('runs at full speed when nothing else arrives, and leaves the loop idle for a while when requests do', async () => {
    await sleep(10);
    const quiet: string[] = [];
    setTimeout(() => quiet.push('1 ms timer'), 1);
    await heavyTurn();
    quiet.push('heavy piece');
    expect(quiet).toEqual(['heavy piece']);

    noteArrival();
    // Paced on a timer of at least 1 ms, so the loop reads its sockets first. Told by the spy: a
    // race of the next turn against a 1 ms timer is lost on a loaded machine (a late loop runs
    // the due timer first).
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      await heavyTurn();
      expect(timers).toHaveBeenCalledTimes(1);
      expect(timers.mock.calls[0]![1]).toBeGreaterThanOrEqual(1);
    } finally {
      timers.mockRestore();
    }
  });

  it('while requests arrive, pauses three times as long as the last piece ran; a piece holding the writer resumes after one turn (decisions HN16, AN17)', async () => {
    /** Runs a piece of about `ms`, then asks for the next turn: which comes first, it or a 6 ms timer? */
    const afterPiece = async (ms: number, holdsWriter: boolean) => {
      await heavyTurn();
      const until = performance.now() + ms;
      while (performance.now() < until) {}
      noteArrival();
      const order: string[] = [];
      // Timers fire in deadline order, however late the loop is: robust on a loaded machine.
      setTimeout(() => order.push('6 ms timer'), 6);
      await heavyTurn(holdsWriter);
      order.push('heavy piece');
      return order[0];
    };
    await sleep(10);
    noteArrival();
    // A 4 ms piece (a statement batch can run past SLICE_MS): a 12 ms pause, the loop's other
    // requests get three quarters of it (a fixed 1 ms pause gave heavy work half).
    expect(await afterPiece(4, false)).toBe('6 ms timer');
    await sleep(30);
    noteArrival();
    // Inside a write transaction: the next turn, no timer (it was 1 ms, with the writer held).
    expect(await afterPiece(4, true)).toBe('heavy piece');
    await sleep(30);
    noteArrival();
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      await heavyTurn(true);
      await heavyTurn(true);
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
    // With nothing arriving, no pause at all.
    await sleep(10);
    const order: string[] = [];
    setTimeout(() => order.push('1 ms timer'), 1);
    await heavyTurn();
    order.push('heavy piece');
    expect(order[0]).toBe('heavy piece');
  });
  it('tells off-loop work how long to pause after a piece: nothing with no request arriving, else three times the piece, 1-20 ms (decisions HN18)', async () => {
    await sleep(10);
    expect(heavyPauseMs(4)).toBe(0);
    noteArrival();
    expect(heavyPauseMs(4)).toBe(12);
    expect(heavyPauseMs(0.1)).toBe(1);
    expect(heavyPauseMs(50)).toBe(20);
  });
});
