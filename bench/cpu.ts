import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * How much CPU *other* processes used while a run was measured, in cores (0.05: a quiet machine;
 * 1.5: a test suite or a compiler was running). The load generator and the server each want a
 * whole CPU, so anything else running shows up directly in req/s and latency; this says which
 * rows to distrust. Linux only (/proc); elsewhere it reports null.
 *
 * Both /proc/stat and /proc/<pid>/stat count in USER_HZ ticks, so the ratio needs no clock rate.
 */

interface Sample {
  /** Busy and total ticks summed over all CPUs. */
  busy: number;
  total: number;
  /** utime + stime of the listed processes. */
  ours: number;
}

function systemTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  return { busy, total: busy + idle! + iowait! };
}

function processTicks(pid: number): number {
  try {
    // The command name (field 2) may hold spaces; the numeric fields follow its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  } catch {
    return 0; // exited
  }
}

function sample(pids: readonly number[]): Sample | null {
  try {
    const sys = systemTicks();
    return { ...sys, ours: pids.reduce((sum, pid) => sum + processTicks(pid), 0) };
  } catch {
    return null;
  }
}

/** Starts a measurement over `pids` (this process and the servers); call the result to read it. */
export function otherCpuMeter(pids: readonly number[]): () => number | null {
  const start = sample(pids);
  return () => {
    const end = sample(pids);
    if (!start || !end || end.total <= start.total) return null;
    const other = Math.max(0, end.busy - start.busy - (end.ours - start.ours));
    // Share of all CPU ticks, scaled to cores.
    return Math.round((other / (end.total - start.total)) * onlineCpus() * 100) / 100;
  };
}

let ticksPerSecond: number | undefined;

/**
 * Starts measuring the CPU time one process uses (all its threads: the event loop, GC and
 * libuv workers); call the result for the milliseconds since. Unlike req/s, CPU time per
 * request hardly moves when other processes compete for the CPUs. Null where /proc is missing.
 */
export function processCpuMeter(pid: number): () => number | null {
  let hz: number;
  try {
    readFileSync(`/proc/${pid}/stat`);
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    hz = ticksPerSecond;
  } catch {
    return () => null;
  }
  const start = processTicks(pid);
  return () => ((processTicks(pid) - start) * 1000) / hz;
}

/** The CPUs /proc/stat sums over (its cpuN lines). */
function onlineCpus(): number {
  return (
    readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .filter((l) => /^cpu\d+ /.test(l)).length || 1
  );
}
