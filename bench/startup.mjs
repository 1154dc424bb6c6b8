// Start-up time (issue 37 item 5): `node bench/startup.mjs [runs]` runs `npm start` on an empty
// SQLite database (a new data directory each run) and times it from the spawn to the first 200 of
// `/health`, then stops it (SIGTERM to its process group) and prints each run and the median.
// The build check of `prestart` is part of the time, as users pay it; the first run after a build
// also fills V8's compile cache (decisions PF7), so a start "when nothing changed" is the runs
// after it. Run it under the bench lock: `flock /work/bench.lock nice -n -5 node bench/startup.mjs 10`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(process.argv[2] ?? 5);

/** A port nothing listens on now (the kernel's choice). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function healthy(url) {
  try {
    return (await fetch(url)).status === 200;
  } catch {
    return false;
  }
}

async function startOnce() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-startup-'));
  const port = await freePort();
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, CAIRN_DATA_DIR: dir, DATABASE_URL: '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  try {
    for (;;) {
      if (await healthy(`http://127.0.0.1:${port}/health`)) return performance.now() - started;
      if (exited) throw new Error(`npm start exited before /health answered\n${stderr}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    const gone = new Promise((r) => (exited ? r() : child.once('exit', r)));
    process.kill(-child.pid, 'SIGTERM');
    await gone;
    // npm may leave before the server has closed: wait for its port to stop answering.
    for (let i = 0; i < 500 && (await healthy(`http://127.0.0.1:${port}/health`)); i++) await new Promise((r) => setTimeout(r, 10));
    rmSync(dir, { recursive: true, force: true });
  }
}

const times = [];
for (let i = 1; i <= runs; i++) {
  const ms = await startOnce();
  times.push(ms);
  process.stdout.write(`run ${i}: ${(ms / 1000).toFixed(2)} s\n`);
}
const sorted = [...times].sort((a, b) => a - b);
const median = sorted[Math.floor((sorted.length - 1) / 2)];
process.stdout.write(
  `npm start -> healthy /health, empty SQLite database: median ${(median / 1000).toFixed(2)} s, max ${(sorted.at(-1) / 1000).toFixed(2)} s over ${runs} runs; load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
