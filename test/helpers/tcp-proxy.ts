import net from 'node:net';

/**
 * A TCP proxy in front of a real server (PostgreSQL, Redis), so a test can cut the service off
 * and bring it back: `cut()` drops every open connection and refuses new ones, `restore()`
 * accepts them again. It listens on an ephemeral port from the start; while cut, connections are
 * accepted and closed at once (a server that went away), or not answered at all with `blackhole`.
 */
export interface TcpProxy {
  port: number;
  cut(mode?: 'reset' | 'blackhole'): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }, options: { startCut?: boolean } = {}): Promise<TcpProxy> {
  let state: 'open' | 'reset' | 'blackhole' = options.startCut ? 'reset' : 'open';
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (state === 'reset') return client.destroy();
    if (state === 'blackhole') return;
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    cut(mode = 'reset') {
      state = mode;
      for (const s of sockets) s.destroy();
    },
    restore() {
      state = 'open';
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
