import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** A port the OS reports free right now (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const OUTPUT_LIMIT = 64 * 1024;

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** The last 64 KiB of its stdout and stderr, for the error message when it misbehaves. */
  output(): string;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  exited: Promise<number | string>;
}

/**
 * Runs `node <args>` with the same node binary as this process. Output is piped and kept (a
 * pipe nobody reads fills up and blocks the child), not echoed: the table is the bench's output.
 */
export function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Child {
  const proc = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > OUTPUT_LIMIT) output = output.slice(-OUTPUT_LIMIT);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<number | string>((resolve) => {
    proc.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    // spawn failure (e.g. ENOENT): no 'exit' event follows.
    proc.once('error', (err) => {
      keep(Buffer.from(`${err.message}\n`));
      resolve('spawn error');
    });
  });
  if (proc.pid === undefined) throw new Error(`${name}: could not start ${process.execPath} ${args.join(' ')}`);
  return { name, proc, pid: proc.pid, output: () => output, exited };
}

/** Polls `url` until it answers 2xx; fails at once if the child exits, or after `timeoutMs`. */
export async function waitForHttp(child: Child, url: string, timeoutMs = 30_000): Promise<void> {
  let exit: number | string | undefined;
  void child.exited.then((code) => {
    exit = code;
  });
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (exit !== undefined) throw new Error(`${child.name} exited (${exit}) before answering ${url}\n${child.output()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms (last: ${last})\n${child.output()}`);
}

/** Resident set size of a process in MB: /proc/<pid>/status (Linux), else `ps` (macOS). */
export function rssMb(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (m) return Number(m[1]) / 1024;
  } catch {
    // Not Linux (or the process is gone): try ps.
  }
  try {
    const kb = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim());
    return Number.isFinite(kb) && kb > 0 ? kb / 1024 : null;
  } catch {
    return null;
  }
}

/** SIGTERM (the service's graceful stop), then SIGKILL if it is still running after `graceMs`. */
export async function stopChild(child: Child, graceMs = 5000): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const stopped = await Promise.race([child.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), graceMs).unref())]);
  if (!stopped) {
    child.proc.kill('SIGKILL');
    await child.exited;
  }
}

/**
 * The node flags the server runs with: those of `npm start` (package.json), so benches measure
 * the server as users run it; BENCH_SERVER_NODE_ARGS replaces them.
 */
export function serverNodeFlags(root: string): string[] {
  const startScript: string = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')).scripts.start;
  const startFlags = startScript.match(/^node((?: --\S+)*) /)?.[1] ?? '';
  return (process.env.BENCH_SERVER_NODE_ARGS ?? startFlags).split(' ').filter(Boolean);
}
