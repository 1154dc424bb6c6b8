import type autocannon from 'autocannon';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startChild, stopChild, waitForHttp } from './children.js';
import { processCpuMeter } from './cpu.js';
import type { BenchContext } from './endpoints.js';
import { collectorTarget } from './analytics-collector.js';
import { type LoadSettings, type Measurement, measure, type Probe, type Target } from './measure.js';

/** Another site's read p99 with the service quiet and while one site floods heavy requests. */
export interface NoisyNeighbourRow {
  flood: string;
  quiet: Measurement;
  loud: Measurement;
  /** loud p99 / quiet p99 (target ≤ 1.5, issue 16 item 6). */
  ratio: number;
  floodResponses: number;
  floodNon2xx: number;
  /**
   * BENCH_NOISY_FLOOR: the neighbour's p99 while the same requests, at the rate the service
   * answered them, go to bare node:http in a process of its own, over the round's quiet p99: what
   * the flood's client, the kernel and a server doing nothing cost the neighbour on this
   * machine's cores, the floor under `ratio`.
   */
  floorRatio?: number;
}

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const FLOOD_SCRIPT = path.join(BENCH_DIR, 'flood.mjs');

/** Runs a flood in a process of its own (bench/flood.mjs), as the noisy tenant's own client. */
/** autocannon's options; `overallRate` (requests a second over all connections) is missing from its types. */
type FloodOptions = autocannon.Options & { overallRate?: number };

async function flood(target: FloodOptions): Promise<{ total: number; non2xx: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-flood-'));
  const file = path.join(dir, 'options.json');
  writeFileSync(file, JSON.stringify(target));
  const child = startChild('flood', [FLOOD_SCRIPT, file], process.env, process.cwd());
  const code = await child.exited;
  rmSync(dir, { recursive: true, force: true });
  const line = child.output().trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`flood exited with ${code}: ${child.output().slice(-2000)}`);
  return JSON.parse(line) as { total: number; non2xx: number };
}

/**
 * Waits until the server has been idle for a quarter of a second (under 10% of a core), at most
 * two minutes. A flood's client stops at its deadline, but the server finishes the requests it
 * was given: a 9,000-row import in flight runs on for seconds, and a "quiet" round measured
 * then measured the import (the row read 0.55-0.88x, with no import answered in the window).
 */
async function waitForIdle(pid: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const cpu = processCpuMeter(pid);
    await new Promise((r) => setTimeout(r, 250));
    const ms = cpu();
    if (ms === null || ms < 25) return;
  }
}

/** About `bytes` of markdown with headings, emphasis, links and lists (every renderer stage works). */
function heavyMarkdown(bytes: number): string {
  const block = '## Section\n\nSome *emphasis*, a [link](https://example.com/page) and `code`.\n\n- one\n- two\n\n';
  return block.repeat(Math.floor(bytes / block.length));
}

/** About `bytes` of English-like prose (a fixed sequence), many of its words starting with `a`. */
function prose(bytes: number, seed: number): string {
  const vocabulary =
    'a an and about above across after again against almost along also always among answer any area around away back because before between both but by came can city could day did different do does down each early end even every few find first for from give good great group hand have head help here high home house important into just keep kind know large last late later life line little long look made make man many may mean men might more most move much must name need never new next night number off often old only open other our out over own part people place point problem program public put quite real right room said same school see seem set she should show side small so some state still such system take tell than that the their them then there these they thing think this those though three through time today together turn under until upon use very want water way week well what when where which while who why will with without word work world would write year young'.split(
      ' ',
    );
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const out: string[] = [];
  let length = 0;
  while (length < bytes) {
    const sentence = Array.from({ length: 8 + Math.floor(next() * 12) }, () => vocabulary[Math.floor(next() * vocabulary.length)]!).join(' ');
    const text = `${sentence[0]!.toUpperCase()}${sentence.slice(1)}.${next() < 0.2 ? '\n\n' : ' '}`;
    out.push(text);
    length += text.length;
  }
  return out.join('');
}

/** Posts of ~60 KB prose on the bench site, for the search row (created through the API). */
async function seedLongPosts(serverUrl: string, token: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${serverUrl}/v1/contents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'post', title: `Long read ${i}`, bodyMarkdown: prose(60_000, i + 1), status: 'published' }),
    });
    if (res.status !== 201) throw new Error(`seeding long posts: ${res.status} ${await res.text()}`);
  }
}

/**
 * The noisy-neighbour rows: the neighbour site reads its tags (10 connections) alone, then again
 * while the bench site runs two loops of a heavy request (as two clients of one tenant would):
 * creating contents with ~950 KB markdown bodies, a full-text search for a word in every post,
 * the public analytics collector, and (issue 36 item 3) a create with a 100,000-key `metadata`
 * object, `search?q=a&limit=100` over 100 posts of 60 KB, and 9,000-row redirect imports.
 * BENCH_NOISY (a part of a row's name, case-insensitive; several separated by `|`) measures the matching rows only.
 * BENCH_NOISY_NEIGHBOUR=create: the neighbour creates tags instead of reading them.
 */
export async function measureNoisyNeighbour(serverUrl: string, ctx: BenchContext, settings: LoadSettings, probe: Probe): Promise<NoisyNeighbourRow[]> {
  const neighbourAuth = { authorization: `Bearer ${ctx.neighbourToken as string}` };
  // BENCH_NOISY_NEIGHBOUR=create: the neighbour creates tags instead of reading them (a write waits
  // for SQLite's one writer, which a heavy write transaction of the flooding site holds).
  const neighbourRead: Target =
    process.env.BENCH_NOISY_NEIGHBOUR === 'create'
      ? {
          url: `${serverUrl}/v1/tags`,
          method: 'POST',
          headers: { ...neighbourAuth, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Neighbour [<id>]' }),
          idReplacement: true,
        }
      : { url: `${serverUrl}/v1/tags?limit=20`, method: 'GET', headers: neighbourAuth };
  const auth = { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' };
  const floods: Array<{ name: string; target: autocannon.Options; seed?: () => Promise<void> }> = [
    {
      name: 'two loops creating ~950 KB markdown bodies',
      target: {
        url: `${serverUrl}/v1/contents`,
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ type: 'post', title: 'Heavy [<id>]', bodyMarkdown: heavyMarkdown(950 * 1024) }),
        idReplacement: true,
      },
    },
    { name: 'two loops of search?q=the', target: { url: `${serverUrl}/v1/contents/search?q=the`, method: 'GET', headers: auth } },
    // Issue 31: the public collector flooded with tracker batches (10 events each).
    { name: 'two loops posting analytics batches of 10 events', target: collectorTarget(serverUrl, ctx, 10) },
    // Issue 36 item 3: 1.5 MB of JSON within BODY_LIMIT (refused from its text since decisions HN5).
    {
      name: 'two loops creating a post with a 100,000-key metadata object',
      target: {
        url: `${serverUrl}/v1/contents`,
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ type: 'post', title: 'Wide', metadata: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])) }),
      },
    },
    {
      name: 'two loops of search?q=a&limit=100 over 100 posts of 60 KB',
      seed: () => seedLongPosts(serverUrl, ctx.token, 100),
      target: { url: `${serverUrl}/v1/contents/search?q=a&limit=100`, method: 'GET', headers: auth },
    },
    {
      name: 'two loops importing 9,000 redirects',
      target: {
        url: `${serverUrl}/v1/redirects/import`,
        method: 'POST',
        headers: auth,
        // [<id>] is a new id per request: every import adds 9,000 new rules.
        body: JSON.stringify({ entries: Array.from({ length: 9000 }, (_, i) => ({ sourcePath: `/old/[<id>]/${i}`, targetUrl: `/new/${i}` })) }),
        idReplacement: true,
      },
    },
  ];
  const only = process.env.BENCH_NOISY?.trim().toLowerCase().split('|').filter(Boolean);
  const rows: NoisyNeighbourRow[] = [];
  // BENCH_NOISY_ROUNDS: quiet and loud measured in turn this many times, the row's figures those
  // of the round with the median ratio (a shared machine's noise moves single p99s 2-3x).
  const rounds = Math.max(1, Number(process.env.BENCH_NOISY_ROUNDS ?? 1) || 1);
  const floor = process.env.BENCH_NOISY_FLOOR ? await startFloorServer() : null;
  try {
    for (const { name, target, seed } of floods) {
      if (only?.length && !only.some((part) => name.toLowerCase().includes(part))) continue;
      await seed?.();
      // One flood first, unmeasured: the first round otherwise measures the server compiling the
      // heavy path and its first large transactions (the import row's first round was 4.8-5.0x where
      // the later ones were 0.8-3.5x, on the old code and the new alike).
      await flood({ ...target, connections: 2, timeout: 60, duration: settings.warmupSec + settings.durationSec });
      const measured: NoisyNeighbourRow[] = [];
      for (let round = 0; round < rounds; round++) {
        await waitForIdle(probe.serverPid);
        const quiet = await measure(neighbourRead, settings, probe);
        // The flood starts first and outlasts the measured run (its warm-up included).
        const floodSec = settings.warmupSec + settings.durationSec + 2;
        const run = flood({ ...target, connections: 2, timeout: 60, duration: floodSec });
        await new Promise((r) => setTimeout(r, 1000));
        const loud = await measure(neighbourRead, settings, probe);
        const floodResult = await run;
        let floorRatio: number | undefined;
        if (floor) {
          // The same requests at the rate the service answered them, sent to bare node:http: unpaced,
          // a bare server answers a 1.5 MB body ten times as often, and the kernel's copying then
          // costs the neighbour more than the service does (2.3x for the metadata row, 4x for imports).
          await waitForIdle(probe.serverPid);
          const floorRun = flood({
            ...target,
            url: floor.url + new URL(target.url as string).pathname,
            connections: 2,
            timeout: 60,
            duration: floodSec,
            overallRate: Math.max(1, Math.round(floodResult.total / floodSec)),
          });
          await new Promise((r) => setTimeout(r, 1000));
          const floorLoud = await measure(neighbourRead, settings, { ...probe, ourPids: [...probe.ourPids, floor.child.pid] });
          await floorRun;
          floorRatio = quiet.p99Ms > 0 ? floorLoud.p99Ms / quiet.p99Ms : Number.NaN;
        }
        measured.push({
          flood: rounds > 1 ? `${name} (median of ${rounds} rounds: ${'{ratios}'})` : name,
          quiet,
          loud,
          ratio: quiet.p99Ms > 0 ? loud.p99Ms / quiet.p99Ms : Number.NaN,
          floodResponses: floodResult.total,
          floodNon2xx: floodResult.non2xx,
          ...(floorRatio !== undefined ? { floorRatio } : {}),
        });
      }
      const sorted = [...measured].sort((a, b) => a.ratio - b.ratio);
      const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
      const floors = measured.flatMap((r) => (r.floorRatio !== undefined ? [r.floorRatio] : [])).sort((a, b) => a - b);
      rows.push({
        ...median,
        flood: median.flood.replace('{ratios}', measured.map((r) => `${r.ratio.toFixed(2)}x`).join(', ')),
        // The floor's own median over the rounds, not the median round's.
        ...(floors.length ? { floorRatio: floors[Math.floor((floors.length - 1) / 2)]! } : {}),
      });
    }
  } finally {
    if (floor) await stopChild(floor.child);
  }
  return rows;
}

/** bench/bare-server.mjs on a port of its own, the target of the floor's floods. */
async function startFloorServer() {
  const port = await freePort();
  const child = startChild('bare node:http (floor)', [path.join(BENCH_DIR, 'bare-server.mjs')], { ...process.env, PORT: String(port) }, process.cwd());
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(child, `${url}/`);
  return { child, url };
}

export function formatNoisyNeighbour(rows: readonly NoisyNeighbourRow[]): string {
  const lines = [
    `| neighbour ${process.env.BENCH_NOISY_NEIGHBOUR === 'create' ? 'create (POST /v1/tags' : 'read (GET /v1/tags'}, other site) while | quiet p50 / p99 ms | loud p50 / p99 ms | p99 ratio (target ≤ 1.5x) | floor: same flood to bare node:http | flood requests (non-2xx) |`,
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.flood} | ${r.quiet.p50Ms.toFixed(2)} / ${r.quiet.p99Ms.toFixed(2)} | ${r.loud.p50Ms.toFixed(2)} / ${r.loud.p99Ms.toFixed(2)} | ${r.ratio.toFixed(2)}x${r.ratio > 1.5 ? ' ✗' : ''} | ${r.floorRatio !== undefined ? `${r.floorRatio.toFixed(2)}x` : '–'} | ${r.floodResponses} (${r.floodNon2xx}) |`,
    );
  }
  return lines.join('\n');
}
