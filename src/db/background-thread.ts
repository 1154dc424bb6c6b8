/**
 * The first lines of a helper thread's source (an eval'd CommonJS worker): the thread lowers its
 * own scheduling priority by 10 nice steps, to at most 19 (Linux keeps a nice value per thread; elsewhere, or where
 * /proc is absent, nothing changes). A helper thread does the work of one request or of the
 * database's upkeep; on a host with few cores it would otherwise take a core's turn from the event
 * loop that serves every site: waking it to run a 10 ms full-text statement preempted the loop
 * in the middle of other sites' requests (decisions H28, HN14).
 */
export const BACKGROUND_PRIORITY_SOURCE = `
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  const os = require('node:os');
  if (tid > 0) os.setPriority(tid, Math.min(19, os.getPriority(tid) + 10));
} catch {}
`;
