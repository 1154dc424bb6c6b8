import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createSiteWithToken, type TestContext } from '../helpers/app.js';

/** A real listening server with short deadlines: slow clients are cut off (issue 16, item 5). */
let ctx: TestContext;
let port: number;
beforeAll(async () => {
  ctx = await buildTestApp({
    http: { requestTimeoutMs: 600, headersTimeoutMs: 400, keepAliveTimeoutMs: 300, maxConnections: 50, maxConnectionsPerAddress: 50 },
  });
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  port = (ctx.app.server.address() as net.AddressInfo).port;
});
afterAll(() => ctx.close());

/** Sends `head`, then one byte of `trickle` every `everyMs`; resolves when the server closes the socket, with what it answered. */
function trickle(head: string, body: string, everyMs: number, giveUpMs = 5000): Promise<{ closedAfterMs: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let i = 0;
    const timer = setInterval(() => {
      if (i < body.length && !socket.destroyed) socket.write(body[i++]!);
    }, everyMs);
    const giveUp = setTimeout(() => {
      clearInterval(timer);
      socket.destroy();
      reject(new Error(`still open after ${giveUpMs} ms`));
    }, giveUpMs);
    socket.on('data', (d) => {
      answer += d.toString();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ closedAfterMs: Date.now() - started, answer });
    });
    socket.write(head);
  });
}

describe('slow clients', () => {
  it('cuts off a body trickled one byte at a time once the request deadline passes (408)', async () => {
    const { token } = await createSiteWithToken(ctx.app);
    const body = JSON.stringify({ name: 'x'.repeat(200) });
    const head = `POST /v1/tags HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const { closedAfterMs, answer } = await trickle(head, body, 50);
    expect(closedAfterMs).toBeLessThan(3000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('cuts off headers trickled one byte at a time', async () => {
    const headers = `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${'a'.repeat(100)}`;
    const { closedAfterMs } = await trickle('', headers, 50);
    expect(closedAfterMs).toBeLessThan(3000);
  });

  it('answers headers over the size limit with 431 and the G3 error body (issue 36 item 8)', async () => {
    const { answer } = await trickle(`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, '', 50);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(body!)).toEqual({
      statusCode: 431,
      error: 'Request Header Fields Too Large',
      code: 'HEADERS_TOO_LARGE',
      message: 'The request headers are too large.',
    });
  });

  it('still serves a normal request on the same server', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    expect(res.status).toBe(200);
  });
});

/** Writes the whole request (head, then the body in 64 KiB pieces), then reads; what came back and any socket error. */
function sendWhole(head: string, body: Buffer, chunked: boolean): Promise<{ answer: string; error: string | null }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let error: string | null = null;
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => resolve({ answer, error }));
    socket.write(head);
    let offset = 0;
    const pump = () => {
      while (offset < body.length && !socket.destroyed) {
        const piece = body.subarray(offset, offset + 65536);
        offset += piece.length;
        const framed = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
        if (!socket.write(framed)) return void socket.once('drain', pump);
      }
      if (chunked && !socket.destroyed) socket.write('0\r\n\r\n');
    };
    pump();
  });
}

describe('a body over BODY_LIMIT (issue 16 item 12)', () => {
  for (const chunked of [false, true]) {
    it(`answers 413 to a client that sends its whole body before reading, without a broken pipe (${chunked ? 'chunked' : 'Content-Length'})`, async () => {
      const { token } = await createSiteWithToken(ctx.app);
      const body = Buffer.alloc(ctx.config.bodyLimit * 4, 'a');
      const length = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`;
      const head = `POST /v1/tags HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${length}\r\n\r\n`;
      const { answer, error } = await sendWhole(head, body, chunked);
      expect(error).toBeNull();
      expect(answer).toMatch(/^HTTP\/1\.1 413/);
      expect(answer).toContain('"code":"PAYLOAD_TOO_LARGE"');
    });
  }
});
