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
