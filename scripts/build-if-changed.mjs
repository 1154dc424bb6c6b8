// `npm start` (prestart) and `npm run bench`: run the TypeScript build only when something it
// reads changed since the last build that succeeded (issue 37 item 5). A full build costs 10-25 s
// on a small machine; comparing modification times costs a few milliseconds.
// Directories count too: deleting or renaming a file changes its directory's time.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const inputs = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time under `dir` of what the build reads (tests and the tracker are not built). */
function newest(dir) {
  let latest = fs.statSync(dir).mtimeMs;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (full !== path.join(root, 'src', 'modules', 'analytics', 'tracker')) latest = Math.max(latest, newest(full));
    } else if (!entry.name.endsWith('.test.ts')) latest = Math.max(latest, fs.statSync(full).mtimeMs);
  }
  return latest;
}

const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
const changed = Math.max(newest(path.join(root, 'src')), ...inputs.map((f) => fs.statSync(path.join(root, f)).mtimeMs));
if (built > changed && !process.argv.includes('--force')) process.exit(0);

// Stamped with the time the build started: a source saved during the build triggers the next one.
const startedAt = new Date();
const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
fs.writeFileSync(stamp, `${startedAt.toISOString()}\n`);
fs.utimesSync(stamp, startedAt, startedAt);
