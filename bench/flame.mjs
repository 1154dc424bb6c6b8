// A flame graph of a V8 CPU profile (issue 37): `node bench/flame.mjs <file.cpuprofile> [marker] [out-prefix]`
// writes <out-prefix>.folded (folded stacks: flamegraph.pl, speedscope and inferno read them) and
// <out-prefix>.svg (an icicle graph, widest frames first, hover for names), and prints the
// top-down tree (inclusive share, frames >= 1%) and the functions with the most self time.
// Samples count from the first whose stack holds `marker` (default `rateLimit`), as in
// bench/profile-summary.mjs, so start-up and seeding are left out; idle samples are dropped.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const [file, marker = 'rateLimit', outArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/flame.mjs <file.cpuprofile> [marker] [out-prefix]\n');
  process.exit(1);
}
const out = outArg ?? file.replace(/\.cpuprofile$/, '');
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n) => {
  const f = n.callFrame;
  const where = f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
};
const stackOf = (id) => {
  const frames = [];
  for (let n = id; n !== undefined; n = parent.get(n)) frames.push(label(nodes.get(n)));
  return frames.reverse().slice(1); // root first, without "(root)"
};

const folded = new Map();
const self = new Map();
let started = false;
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const stack = stackOf(profile.samples[i]);
  if (!started) {
    if (!stack.some((f) => f.split(' ')[0] === marker)) continue;
    started = true;
  }
  const leaf = stack[stack.length - 1];
  if (leaf === '(idle)' || leaf === '(program)') continue;
  const dt = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i];
  total += dt;
  const key = stack.join(';');
  folded.set(key, (folded.get(key) ?? 0) + dt);
  self.set(leaf, (self.get(leaf) ?? 0) + dt);
}
if (!started) {
  process.stderr.write(`no sample inside ${marker}\n`);
  process.exit(1);
}
writeFileSync(`${out}.folded`, [...folded].map(([k, v]) => `${k} ${v}`).join('\n') + '\n');

// The tree, for the text summary and the SVG.
const root = { name: 'all', value: 0, children: new Map() };
for (const [key, v] of folded) {
  root.value += v;
  let node = root;
  for (const frame of key.split(';')) {
    let child = node.children.get(frame);
    if (!child) node.children.set(frame, (child = { name: frame, value: 0, children: new Map() }));
    child.value += v;
    node = child;
  }
}
const pct = (v) => `${((100 * v) / total).toFixed(1)}%`;
const lines = [`busy samples: ${(total / 1000).toFixed(0)} ms`, '', 'top-down (inclusive share, frames >= 1%):'];
const walk = (node, depth) => {
  for (const child of [...node.children.values()].sort((a, b) => b.value - a.value)) {
    if (child.value / total < 0.01) continue;
    lines.push(`${'  '.repeat(depth)}${pct(child.value)} ${child.name}`);
    walk(child, depth + 1);
  }
};
walk(root, 0);
lines.push('', 'self time (top 25):');
for (const [name, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) lines.push(`${pct(v).padStart(6)} ${name}`);
process.stdout.write(`${lines.join('\n')}\n`);

// SVG icicle: root at the top, one 16 px row per depth.
const W = 1600;
const H = 16;
const rects = [];
let maxDepth = 0;
const place = (node, x, depth) => {
  maxDepth = Math.max(maxDepth, depth);
  const w = (node.value / total) * W;
  if (w < 0.5) return;
  const esc = node.name.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  let hue = 0;
  for (const ch of node.name) hue = (hue * 31 + ch.charCodeAt(0)) % 360;
  const text =
    w > 40
      ? `<text x="${(x + 3).toFixed(1)}" y="${depth * H + 12}" font-size="11" font-family="monospace" clip-path="url(#c${rects.length})">${esc}</text>`
      : '';
  rects.push(
    `<g><title>${esc} (${pct(node.value)})</title><clipPath id="c${rects.length}"><rect x="${x.toFixed(1)}" y="${depth * H}" width="${w.toFixed(1)}" height="${H}"/></clipPath><rect x="${x.toFixed(1)}" y="${depth * H}" width="${w.toFixed(1)}" height="${H - 1}" fill="hsl(${hue},60%,70%)"/>${text}</g>`,
  );
  let cx = x;
  for (const child of [...node.children.values()].sort((a, b) => b.value - a.value)) {
    place(child, cx, depth + 1);
    cx += (child.value / total) * W;
  }
};
place(root, 0, 0);
writeFileSync(`${out}.svg`, `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${(maxDepth + 1) * H}">${rects.join('')}</svg>\n`);
process.stderr.write(`wrote ${out}.folded and ${out}.svg\n`);
