import autocannon from 'autocannon';
import { otherCpuMeter } from './cpu.js';
import { rssMb } from './children.js';

export interface LoadSettings {
  connections: number;
  durationSec: number;
  warmupSec: number;
}

export interface Target {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Measurement {
  /** Average of autocannon's per-second samples. */
  reqPerSec: number;
  /** Latency percentiles of the 2xx responses, ms. */
  p50Ms: number;
  p99Ms: number;
  /** Responses received in the measured run (warm-up excluded). */
  responses: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** The measured server's resident memory right after the run, MB (null if unreadable). */
  rssMb: number | null;
  /**
   * CPU used by processes other than the bench and its servers during the run, in cores
   * (bench/cpu.ts). Near 0 on a quiet machine; above ~0.25 the row competed for the CPUs and is
   * not comparable with the others. Null where /proc is not available.
   */
  otherCpuCores: number | null;
}

/** Which process to measure, and every process of ours (their CPU time is not "other"). */
export interface Probe {
  serverPid: number;
  ourPids: readonly number[];
}

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/**
 * Loads one target with autocannon: a short warm-up run whose numbers are dropped (JIT, statement
 * cache, connection set-up), then the measured run. Latency percentiles come from the per-response
 * times autocannon emits (sub-ms precision); its own histogram stores whole milliseconds, which
 * flattens a fast endpoint's p50 to 0 or 1.
 */
export async function measure(target: Target, load: LoadSettings, probe: Probe): Promise<Measurement> {
  const options: autocannon.Options = {
    url: target.url,
    method: target.method,
    headers: target.headers,
    connections: load.connections,
    timeout: 10,
    ...(target.body !== undefined ? { body: target.body } : {}),
  };
  if (load.warmupSec > 0) await autocannon({ ...options, duration: load.warmupSec });

  const latencies: number[] = [];
  const otherCpu = otherCpuMeter([process.pid, ...probe.ourPids]);
  const run = autocannon({ ...options, duration: load.durationSec });
  run.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result = await run;
  const otherCpuCores = otherCpu();
  const rss = rssMb(probe.serverPid);

  const sorted = Float64Array.from(latencies).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  return {
    reqPerSec: result.requests.average,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    responses: Object.values(statusCodes).reduce((a, b) => a + b, 0),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    rssMb: rss,
    otherCpuCores,
  };
}

/**
 * One request before the load, so a wrong path, a missing scope or a 500 is reported with the
 * response body instead of as thousands of non-2xx responses. Returns an error message or null.
 */
export async function preflight(target: Target): Promise<string | null> {
  try {
    const res = await fetch(target.url, {
      method: target.method,
      headers: target.headers,
      ...(target.body !== undefined ? { body: target.body } : {}),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return res.ok ? null : `HTTP ${res.status}: ${text.slice(0, 500)}`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
