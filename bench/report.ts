import os from 'node:os';
import { execFileSync } from 'node:child_process';
import type { Baseline } from './baselines.js';
import type { BenchTargets } from './endpoints.js';
import { statementLabel } from './parity.js';
import type { LoadSettings, Measurement } from './measure.js';
import type { SeedTiming } from './seed.js';

/** Above this many cores of other processes' CPU during a run, its row is flagged as noisy. */
const NOISY_OTHER_CPU = 0.25;

export interface MachineInfo {
  node: string;
  platform: string;
  cpus: number;
  cpuModel: string;
  memoryGb: number;
  loadAverage: number[];
  /** `git describe --always --dirty` of the checkout, when available. */
  commit: string | null;
}

export interface BaselineResult {
  id: string;
  label: string;
  path: string;
  result: Measurement;
}

export interface EndpointResult {
  name: string;
  method: string;
  path: string;
  /** Null when the endpoint failed its preflight request and was not loaded. */
  result: Measurement | null;
  error?: string;
  /** Per baseline id: the endpoint's req/s divided by the baseline's (and the baseline's own run when measured per endpoint). */
  vs: Record<
    string,
    {
      ratio: number | null;
      result?: Measurement;
      /** A per-endpoint baseline with no equivalent of this endpoint (shown as a dash). */
      none?: boolean;
      /** The baseline does not answer the same JSON, or runs SQL the service does not (bench/parity.ts). */
      mismatch?: string;
      /** Statements the service runs for this request and the baseline does not (its own extra work). */
      serviceOnlySql?: string[];
    }
  >;
  /** What the endpoint's issue asks (bench/endpoints.ts), checked by formatTargets. */
  targets?: BenchTargets;
}

export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  machine: MachineInfo;
  settings: LoadSettings;
  seed: SeedTiming[];
  /** The service's RSS after start and seeding, before any load. */
  serverIdleRssMb: number | null;
  baselines: BaselineResult[];
  endpoints: EndpointResult[];
  /** Another site's reads, quiet and under a heavy flood (bench/noisy-neighbour.ts). */
  noisyNeighbour?: Array<{ flood: string; ratio: number; quiet: Measurement; loud: Measurement }>;
  mediaUploads?: { file: string; runs: number; p50Ms: number; p99Ms: number; meanMs: number; serverCpuMsPerUpload: number | null };
  analyticsCollector?: Array<{ name: string; eventsPerRequest: number; eventsPerSec: number; accepted: number; stored: number; result: Measurement }>;
  analyticsReports?: {
    rows: Array<{ report: string; days: number; filters: string; p50: number; p95: number; sampled: boolean }>;
    events: number;
    sessions: number;
    bytes: number;
  };
  ok: boolean;
}

export function machineInfo(cwd: string): MachineInfo {
  const cpus = os.cpus();
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['describe', '--always', '--dirty'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // Not a git checkout.
  }
  return {
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
    commit,
  };
}

/**
 * `otherCpuNow`: cores other processes used over the last moment (bench/cpu.ts), null where it
 * cannot be read; then the 1-minute load average stands in, which lags by about a minute.
 */
export function formatHeader(m: MachineInfo, s: LoadSettings, otherCpuNow: number | null): string {
  const lines = [
    `node ${m.node} · ${m.platform} · ${m.cpus} × ${m.cpuModel} · ${m.memoryGb} GB · load ${m.loadAverage.join(' ')}${m.commit ? ` · ${m.commit}` : ''}`,
    `autocannon: ${s.connections} connections, ${s.warmupSec} s warm-up + ${s.durationSec} s per endpoint, from the bench process`,
  ];
  // The load generator and the server each want a whole CPU; anything else running skews the
  // rows measured while it runs, and so the ratios (the baseline is measured once, first).
  const busy = otherCpuNow !== null ? otherCpuNow > NOISY_OTHER_CPU : m.loadAverage[0]! > Math.max(0.5, m.cpus / 4);
  if (busy) {
    const what = otherCpuNow !== null ? `other processes use ${otherCpuNow} cores` : `1-min load ${m.loadAverage[0]} on ${m.cpus} CPUs`;
    lines.push(`⚠ the machine is busy (${what}): numbers will be noisy; each row's share is in the notes and the JSON`);
  }
  return lines.join('\n');
}

const fmt = {
  rps: (n: number) => Math.round(n).toString(),
  ms: (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1)),
  mb: (n: number | null) => (n === null ? '?' : n.toFixed(0)),
  cpu: (n: number | null | undefined) => (n === null || n === undefined ? '?' : n < 1 ? n.toFixed(3) : n.toFixed(2)),
  ratio: (n: number | null | undefined) => (n === null || n === undefined ? 'n/a' : `${n.toFixed(2)}x`),
};

/**
 * The markdown table: the once-measured baselines' rows first, then one row per endpoint, each
 * followed by a `↳` row per baseline measured for it (its own req/s and latency).
 */
export function formatTable(report: BenchReport, baselines: readonly Baseline[]): string {
  const head = ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'CPU ms/req', 'RSS MB', ...baselines.map((b) => `vs ${b.label}`)];
  const align = ['---', '---:', '---:', '---:', '---:', '---:', ...baselines.map(() => '---:')];
  const rows: string[][] = [];
  const cells = (m: Measurement) => [fmt.rps(m.reqPerSec), fmt.ms(m.p50Ms), fmt.ms(m.p99Ms), fmt.cpu(m.cpuMsPerReq), fmt.mb(m.rssMb)];

  for (const b of report.baselines) {
    // A baseline's row compares with itself (1.00x) in its own column, with nothing elsewhere.
    rows.push([`${b.label} (fixed JSON)`, ...cells(b.result), ...baselines.map((col) => (col.id === b.id ? '1.00x' : ''))]);
  }
  for (const e of report.endpoints) {
    if (!e.result) {
      rows.push([`${e.name} ⚠`, 'failed', '', '', '', '', ...baselines.map(() => '')]);
      continue;
    }
    const flag = e.result.non2xx || e.result.errors || e.result.timeouts ? ' ⚠' : '';
    const ratio = (b: Baseline) => {
      const v = e.vs[b.id];
      if (v?.none) return '—';
      return `${fmt.ratio(v?.ratio)}${v?.mismatch ? ' ⚠' : ''}`;
    };
    rows.push([`${e.name}${flag}`, ...cells(e.result), ...baselines.map(ratio)]);
    for (const b of baselines) {
      const own = e.vs[b.id]?.result;
      if (own) rows.push([`↳ ${b.label}`, ...cells(own), ...baselines.map(() => '')]);
    }
  }
  const line = (r: string[]) => `| ${r.join(' | ')} |`;
  return [line(head), line(align), ...rows.map(line)].join('\n');
}

/** Problems worth a line under the table: non-2xx responses, socket errors, timeouts, failed preflights. */
export function formatWarnings(report: BenchReport): string[] {
  const out: string[] = [];
  const check = (name: string, m: Measurement) => {
    if (m.non2xx) out.push(`${name}: ${m.non2xx} non-2xx responses (status codes: ${JSON.stringify(m.statusCodes)})`);
    if (m.errors) out.push(`${name}: ${m.errors} connection errors`);
    if (m.timeouts) out.push(`${name}: ${m.timeouts} timeouts`);
  };
  for (const b of report.baselines) check(b.label, b.result);
  for (const e of report.endpoints) {
    if (e.error) out.push(`${e.name}: not measured, preflight request failed: ${e.error}`);
    if (e.result) check(e.name, e.result);
    for (const [id, v] of Object.entries(e.vs)) {
      if (v.result) check(`${e.name} (baseline ${id})`, v.result);
      if (v.mismatch) out.push(`${e.name}: baseline ${id} does not answer like the service, so its ratio compares different work: ${v.mismatch}`);
    }
  }
  return out;
}

/** One line per endpoint with targets: each target, its value, met (✓) or missed (✗). */
export function formatTargets(report: BenchReport, baselines: readonly Baseline[]): string[] {
  const out: string[] = [];
  for (const e of report.endpoints) {
    if (!e.targets) continue;
    if (!e.result) {
      out.push(`✗ ${e.name}: not measured`);
      continue;
    }
    const checks: string[] = [];
    let met = true;
    for (const [id, min] of Object.entries(e.targets.minRatio ?? {})) {
      const ratio = e.vs[id]?.ratio;
      const label = baselines.find((b) => b.id === id)?.label ?? id;
      const ok = ratio !== null && ratio !== undefined && ratio >= min && !e.vs[id]?.mismatch;
      met &&= ok;
      checks.push(`${fmt.ratio(ratio)} of ${label} (≥ ${min.toFixed(2)}x${e.vs[id]?.mismatch ? ', answers differ' : ''}) ${ok ? '✓' : '✗'}`);
    }
    if (e.targets.p99Ms !== undefined) {
      const ok = e.result.p99Ms < e.targets.p99Ms;
      met &&= ok;
      checks.push(`p99 ${fmt.ms(e.result.p99Ms)} ms (< ${e.targets.p99Ms}) ${ok ? '✓' : '✗'}`);
    }
    out.push(`${met ? '✓' : '✗'} ${e.name}: ${checks.join('; ')}`);
  }
  return out;
}

/** The service's extra statements per request, per endpoint compared with a baseline (from the parity check). */
export function formatServiceOnlySql(report: BenchReport, baselines: readonly Baseline[]): string[] {
  const out: string[] = [];
  for (const b of baselines) {
    const byStatements = new Map<string, string[]>();
    for (const e of report.endpoints) {
      const extra = e.vs[b.id]?.serviceOnlySql;
      if (!extra) continue;
      const key = extra.length ? extra.map(statementLabel).join(' + ') : 'none';
      byStatements.set(key, [...(byStatements.get(key) ?? []), e.name]);
    }
    for (const [statements, names] of byStatements) {
      out.push(`statements the service runs beyond ${b.label} (same SQL otherwise): ${statements} [${names.join(', ')}]`);
    }
  }
  return out;
}

/** Rows measured while other processes used the CPUs: a note, not a failure. */
export function formatNoiseNotes(report: BenchReport): string[] {
  const rows: Array<[string, Measurement]> = [
    ...report.baselines.map((b): [string, Measurement] => [b.label, b.result]),
    ...report.endpoints.flatMap(
      (e): Array<[string, Measurement]> => [
        ...(e.result ? [[e.name, e.result] as [string, Measurement]] : []),
        ...Object.entries(e.vs).flatMap(([id, v]) => (v.result ? [[`${e.name} (baseline ${id})`, v.result] as [string, Measurement]] : [])),
      ],
    ),
  ];
  const noisy = rows.filter(([, m]) => (m.otherCpuCores ?? 0) > NOISY_OTHER_CPU);
  if (noisy.length === 0) return [];
  return [
    `other processes used the CPUs during ${noisy.length} of ${rows.length} runs (${noisy.map(([n, m]) => `${n}: ${m.otherCpuCores} cores`).join('; ')}); ` +
      'those rows and their ratios are not comparable, rerun on a quiet machine',
  ];
}
