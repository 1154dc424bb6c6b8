import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';

/**
 * A Redis server of the test's own, on a free port, that the test may stop (SIGSTOP: a hung
 * Redis whose connections stay open and never answer) and continue. Never the shared one.
 */
export interface OwnRedis {
  url: string;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once the server answers PING on a fresh connection. */
async function answers(port: number, deadline: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      const done = (ok: boolean) => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(200, () => done(false));
      socket.on('error', () => done(false));
      socket.on('connect', () => socket.write('PING\r\n'));
      socket.on('data', (d) => done(String(d).startsWith('+PONG')));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await answers(port, Date.now() + 10_000);
  return {
    url: `redis://127.0.0.1:${port}`,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGCONT');
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
