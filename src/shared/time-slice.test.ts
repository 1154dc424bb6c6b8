import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { heavyTurn, noteArrival } from './time-slice.js';

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
    const busy: string[] = [];
    setImmediate(() => busy.push('next turn'));
    await heavyTurn();
    busy.push('heavy piece');
    // Paced on a timer: the turn (where sockets are read) comes first.
    expect(busy).toEqual(['next turn', 'heavy piece']);
  });
});
