import type autocannon from 'autocannon';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from './children.js';
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
}

const FLOOD_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'flood.mjs');

/** Runs a flood in a process of its own (bench/flood.mjs), as the noisy tenant's own client. */
async function flood(target: autocannon.Options): Promise<{ total: number; non2xx: number }> {
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

/** About `bytes` of markdown with headings, emphasis, links and lists (every renderer stage works). */
function heavyMarkdown(bytes: number): string {
  const block = '## Section\n\nSome *emphasis*, a [link](https://example.com/page) and `code`.\n\n- one\n- two\n\n';
  return block.repeat(Math.floor(bytes / block.length));
}

/**
 * The noisy-neighbour rows: the neighbour site reads its tags (10 connections) alone, then again
 * while the bench site runs two loops of a heavy request (as two clients of one tenant would):
 * creating contents with ~950 KB markdown bodies, and a full-text search for a word in every post.
 */
export async function measureNoisyNeighbour(serverUrl: string, ctx: BenchContext, settings: LoadSettings, probe: Probe): Promise<NoisyNeighbourRow[]> {
  const neighbourRead: Target = { url: `${serverUrl}/v1/tags?limit=20`, method: 'GET', headers: { authorization: `Bearer ${ctx.neighbourToken as string}` } };
  const auth = { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' };
  const floods: Array<{ name: string; target: autocannon.Options }> = [
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
  ];
  const rows: NoisyNeighbourRow[] = [];
  for (const { name, target } of floods) {
    const quiet = await measure(neighbourRead, settings, probe);
    // The flood starts first and outlasts the measured run (its warm-up included).
    const run = flood({ ...target, connections: 2, timeout: 60, duration: settings.warmupSec + settings.durationSec + 2 });
    await new Promise((r) => setTimeout(r, 1000));
    const loud = await measure(neighbourRead, settings, probe);
    const floodResult = await run;
    rows.push({
      flood: name,
      quiet,
      loud,
      ratio: quiet.p99Ms > 0 ? loud.p99Ms / quiet.p99Ms : Number.NaN,
      floodResponses: floodResult.total,
      floodNon2xx: floodResult.non2xx,
    });
  }
  return rows;
}

export function formatNoisyNeighbour(rows: readonly NoisyNeighbourRow[]): string {
  const lines = [
    '| neighbour read (GET /v1/tags, other site) while | quiet p50 / p99 ms | loud p50 / p99 ms | p99 ratio (target ≤ 1.5x) | flood requests (non-2xx) |',
    '| --- | ---: | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.flood} | ${r.quiet.p50Ms.toFixed(2)} / ${r.quiet.p99Ms.toFixed(2)} | ${r.loud.p50Ms.toFixed(2)} / ${r.loud.p99Ms.toFixed(2)} | ${r.ratio.toFixed(2)}x${r.ratio > 1.5 ? ' ✗' : ''} | ${r.floodResponses} (${r.floodNon2xx}) |`,
    );
  }
  return lines.join('\n');
}
