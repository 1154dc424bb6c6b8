import type http from 'node:http';
import type net from 'node:net';
import ipaddr from 'ipaddr.js';
import { AppError } from '../shared/errors.js';

/**
 * Whose connection a socket is: an IPv4 address, or an IPv6 client's /64 (one host or one home
 * network is given a whole /64, so counting single IPv6 addresses would cap nothing).
 */
export function connectionOwner(address: string | undefined): string {
  if (!address || !ipaddr.isValid(address)) return address ?? '';
  let addr = ipaddr.parse(address);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  if (addr.kind() === 'ipv4') return addr.toString();
  const bytes = addr.toByteArray().fill(0, 8);
  return `${ipaddr.fromByteArray(bytes).toString()}/64`;
}

/**
 * How long a shed connection stays after its 429 is handed to the kernel: it still counts
 * against HTTP_MAX_CONNECTIONS until destroyed, so a flood of new connections must not linger.
 */
const SHED_GRACE_MS = 20;

/**
 * At most `cap` open connections per client address (decisions HN4). A connection that would
 * take its address over the cap, the newest, is answered a 429 with the G3 body and closed
 * before any request on it is read; the address's older connections are kept. One client
 * holding half-open connections can then fill only its share of `HTTP_MAX_CONNECTIONS`, and
 * every other address is still served.
 */
export function limitConnectionsPerAddress(server: http.Server, cap: number): void {
  const open = new Map<string, number>();
  // Node's own listener (its HTTP parser) runs only for connections within the cap.
  const [parse] = server.listeners('connection') as Array<(socket: net.Socket) => void>;
  if (!parse) throw new Error('limitConnectionsPerAddress: the server has no connection listener to wrap');
  server.removeListener('connection', parse);
  server.on('connection', (socket: net.Socket) => {
    const owner = connectionOwner(socket.remoteAddress);
    const count = open.get(owner) ?? 0;
    if (count >= cap) return shed(socket, cap);
    open.set(owner, count + 1);
    socket.once('close', () => {
      const left = (open.get(owner) ?? 1) - 1;
      if (left > 0) open.set(owner, left);
      else open.delete(owner);
    });
    parse.call(server, socket);
  });
}

function shed(socket: net.Socket, cap: number): void {
  const body = JSON.stringify(
    new AppError('RATE_LIMITED', { message: `Too many open connections from your address (at most ${cap}); close one or retry in a second.` }).toBody(),
  );
  socket.on('error', () => socket.destroy());
  // What the client sent is read and dropped, so closing does not reset the answer away.
  socket.resume();
  socket.end(
    `HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.once('finish', () => setTimeout(() => socket.destroy(), SHED_GRACE_MS).unref());
}
