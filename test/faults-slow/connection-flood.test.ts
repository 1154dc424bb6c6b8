import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionOwner } from '../../src/plugins/connections.js';
import { buildTestApp, type TestContext } from '../helpers/app.js';

/**
 * One address opens more connections than the whole server takes (headers never finished, no
 * token): the others must still be served (issue 36 item 2). Loopback addresses 127.0.0.x are
 * distinct clients: Linux routes all of 127/8 to the loopback interface.
 */
const MAX = 120;
const PER_ADDRESS = 20;
let ctx: TestContext;
let port: number;
beforeAll(async () => {
  ctx = await buildTestApp({
    http: { requestTimeoutMs: 20_000, headersTimeoutMs: 15_000, keepAliveTimeoutMs: 5_000, maxConnections: MAX, maxConnectionsPerAddress: PER_ADDRESS },
  });
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  port = (ctx.app.server.address() as net.AddressInfo).port;
});
afterAll(() => ctx.close());

/** A connection from `from` that sends half a request and then nothing; records what the server said and whether it closed. */
function halfOpen(from: string) {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
  const state = { answer: '', closed: false, socket };
  socket.on('data', (d) => {
    state.answer += d.toString();
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    state.closed = true;
  });
  socket.on('connect', () => socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\nX-Never: ending'));
  return state;
}

/** A whole request from `from` on a new connection: its status, or the error's code. */
function get(from: string, path = '/health'): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, localAddress: from, agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
  });
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a flood of half-open connections from one address', () => {
  it('holds that address to its cap (the newest beyond it are shed with a 429) while other addresses are served', async () => {
    const flood = Array.from({ length: MAX + 30 }, () => halfOpen('127.0.0.2'));
    await settle(1000);
    const open = flood.filter((c) => !c.closed);
    const shed = flood.filter((c) => c.closed);
    expect(open).toHaveLength(PER_ADDRESS);
    expect(shed).toHaveLength(MAX + 30 - PER_ADDRESS);
    // The ones shed were told why before the server closed them.
    for (const c of shed) expect(c.answer).toMatch(/^HTTP\/1\.1 429 .*\r\n[\s\S]*"code":"RATE_LIMITED"/);
    // The first connections are the ones kept (the newest are shed).
    expect(flood.slice(0, PER_ADDRESS).every((c) => !c.closed)).toBe(true);

    // During the flood, other addresses are served, many at once.
    const others = ['127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];
    const statuses = await Promise.all(others.flatMap((from) => Array.from({ length: 10 }, () => get(from))));
    expect(statuses).toEqual(Array(40).fill(200));

    // The flooding address gets a connection again as soon as one of its own closes.
    expect(await get('127.0.0.2')).toBe(429);
    for (const c of open.slice(0, 5)) c.socket.destroy();
    await settle(200);
    expect(await get('127.0.0.2')).toBe(200);
    for (const c of flood) c.socket.destroy();
  }, 30_000);
});

describe('whose connection a socket is', () => {
  it('an IPv4 address (mapped or not) is itself; an IPv6 address counts as its /64', () => {
    expect(connectionOwner('127.0.0.2')).toBe('127.0.0.2');
    expect(connectionOwner('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(connectionOwner('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(connectionOwner('2001:db8:1:2:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(connectionOwner('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
  });
});
