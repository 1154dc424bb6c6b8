import autocannon from 'autocannon';
import { otherCpuMeter, processCpuMeter } from './cpu.js';
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
  /** Every `[<id>]` in the body becomes a unique id on each request. */
  idReplacement?: boolean;
  /** The status a correct answer has, when it is not a 2xx (a redirect resolve's miss is a 404). */
  expectStatus?: number;
}

/** Whether a status is the target's correct answer: its expected status, or any 2xx. */
function isExpected(target: Target, status: number): boolean {
  return target.expectStatus !== undefined ? status === target.expectStatus : status >= 200 && status < 300;
}

export interface Measurement {
  /** Average of autocannon's per-second samples. */
  reqPerSec: number;
  /** Wall time of the measured run, s (responses ÷ this is the rate over the whole run, stalls included). */
  elapsedSec: number;
  /** Latency percentiles of the expected (2xx) responses, ms. */
  p50Ms: number;
  p99Ms: number;
  /** Responses received in the measured run (warm-up excluded). */
  responses: number;
  /**
   * Requests of the warm-up and the measured run that were sent but not answered when autocannon
   * stopped at the end of its duration (at most one a connection and run): the server may have
   * handled them, the bench never sees their answers.
   */
  unanswered: number;
  /** Responses with another status than the expected one (2xx unless the target names one). */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /**
   * CPU time the measured server used per response (all its threads), ms; steadier than req/s on
   * a busy machine. Null where /proc is not available.
   */
  cpuMsPerReq: number | null;
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
export async function measure(
  target: Target,
  load: LoadSettings,
  probe: Probe,
  onExpected?: () => void,
  onBody?: (status: number, body: string, measured: boolean) => void,
): Promise<Measurement> {
  const options: autocannon.Options = {
    url: target.url,
    method: target.method,
    headers: target.headers,
    connections: load.connections,
    timeout: 10,
    ...(target.body !== undefined ? { body: target.body } : {}),
    ...(target.idReplacement ? { idReplacement: true } : {}),
  };
  // Each response's body, when asked for (the collector's 202 says how many events it accepted).
  const withBodies = (measured: boolean): autocannon.Options =>
    onBody
      ? {
          ...options,
          requests: [
            {
              method: target.method,
              headers: target.headers,
              ...(target.body !== undefined ? { body: target.body } : {}),
              onResponse: (status: number, body: string) => onBody(status, body, measured),
            },
          ],
        }
      : options;
  const answered = (r: autocannon.Result) => Object.values(r.statusCodeStats).reduce((sum, { count }) => sum + count, 0);
  let unanswered = 0;
  if (load.warmupSec > 0) {
    const warmup = autocannon({ ...withBodies(false), duration: load.warmupSec });
    if (onExpected) warmup.on('response', (_client, statusCode) => isExpected(target, statusCode) && onExpected());
    const w = await warmup;
    unanswered += Math.max(0, w.requests.sent - answered(w));
  }

  const latencies: number[] = [];
  const otherCpu = otherCpuMeter([process.pid, ...probe.ourPids]);
  const serverCpu = processCpuMeter(probe.serverPid);
  const startedAt = performance.now();
  const run = autocannon({ ...withBodies(true), duration: load.durationSec });
  run.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (!isExpected(target, statusCode)) return;
    latencies.push(responseTime);
    onExpected?.();
  });
  const result = await run;
  const elapsedSec = (performance.now() - startedAt) / 1000;
  const otherCpuCores = otherCpu();
  const serverCpuMs = serverCpu();
  const rss = rssMb(probe.serverPid);

  const sorted = Float64Array.from(latencies).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  const responses = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  unanswered += Math.max(0, result.requests.sent - responses);
  return {
    reqPerSec: result.requests.average,
    elapsedSec,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    cpuMsPerReq: serverCpuMs !== null && responses > 0 ? serverCpuMs / responses : null,
    responses,
    unanswered,
    non2xx: target.expectStatus !== undefined ? responses - (statusCodes[String(target.expectStatus)] ?? 0) : result.non2xx,
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
    const { status, text } = await fetchOnce(target);
    return isExpected(target, status) ? null : `HTTP ${status}: ${text.slice(0, 500)}`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

let preflightIds = 0;

/** One request, `[<id>]` replaced as autocannon would. */
async function fetchOnce(target: Target): Promise<{ status: number; text: string }> {
  const body = target.body !== undefined && target.idReplacement ? target.body.replace(/\[<id>\]/g, `preflight-${process.pid}-${++preflightIds}`) : target.body;
  const res = await fetch(target.url, {
    method: target.method,
    headers: target.headers,
    ...(body !== undefined ? { body } : {}),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, text: await res.text() };
}
