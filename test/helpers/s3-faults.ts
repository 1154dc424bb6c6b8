import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { buildTestApp, type TestContext } from './app.js';
import { testBucket } from './s3.js';

/** What the proxy does to a request a rule matches. */
export type S3Fault =
  /** Reads the whole body, then never answers (a store that accepts an upload and hangs). */
  | 'stall'
  /** Drops the connection as soon as the request head arrives. */
  | 'reset'
  /** Reads the body and answers 500 InternalError, as S3 does on a fault of its own. */
  | '500';

/** Which S3 call a request is, from its method, path and headers (path-style addressing). */
export const S3_CALLS = {
  copyObject: (req: http.IncomingMessage) => req.method === 'PUT' && req.headers['x-amz-copy-source'] !== undefined,
  /** A PutObject or a part of a multipart upload. */
  putObject: (req: http.IncomingMessage) => req.method === 'PUT' && req.headers['x-amz-copy-source'] === undefined,
  getObject: (req: http.IncomingMessage) => req.method === 'GET' && (req.url ?? '').split('?')[0]!.split('/').length > 2,
  deleteObject: (req: http.IncomingMessage) => req.method === 'DELETE',
  any: () => true,
} as const;

export interface S3FaultProxy {
  /** The endpoint to give the app instead of the real server's. */
  endpoint: string;
  /** From now on, requests `matches` picks get `fault` (the next `times` of them; every one without). */
  inject(matches: (req: http.IncomingMessage) => boolean, fault: S3Fault, times?: number): void;
  /** Every request passes again. */
  heal(): void;
  /** How many requests met a fault so far. */
  faulted: number;
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the real S3 server (radosgw) that injects faults into chosen calls and
 * passes the rest through untouched: the request is forwarded with its own headers (its Host
 * included, so its signature still holds), the answer streamed back. Tests of a store that fails
 * run the real client against the real server, not a hand-written imitation of S3.
 */
export async function startS3FaultProxy(target: string): Promise<S3FaultProxy> {
  const upstream = new URL(target);
  const rules: Array<{ matches: (req: http.IncomingMessage) => boolean; fault: S3Fault; left: number }> = [];
  const sockets = new Set<Socket>();
  const state = { faulted: 0 };

  const server = http.createServer((req, res) => {
    const rule = rules.find((r) => r.left > 0 && r.matches(req));
    if (rule) {
      rule.left--;
      state.faulted++;
      if (rule.fault === 'reset') return req.socket.destroy();
      req.resume();
      if (rule.fault === 'stall') return;
      return req.on('end', () =>
        res
          .writeHead(500, { 'content-type': 'application/xml' })
          .end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>Injected fault</Message></Error>'),
      );
    }
    const forwarded = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => req.socket.destroy());
    req.pipe(forwarded);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    inject(matches, fault, times = Number.POSITIVE_INFINITY) {
      rules.unshift({ matches, fault, left: times });
    },
    heal() {
      rules.length = 0;
    },
    get faulted() {
      return state.faulted;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * For a test file: an app whose files go to a new bucket of the test S3 server through a fault
 * proxy, each request to the store given `timeoutMs` (S3_TIMEOUT_MS); built before the tests,
 * removed with the bucket after.
 */
export function useS3FaultApp(timeoutMs: number) {
  let ctx: TestContext | undefined;
  let proxy: S3FaultProxy | undefined;
  let bucket: Awaited<ReturnType<typeof testBucket>> | undefined;
  beforeAll(async () => {
    bucket = await testBucket();
    proxy = await startS3FaultProxy(bucket.config.endpoint!);
    ctx = await buildTestApp({ s3: { ...bucket.config, endpoint: proxy.endpoint, timeoutMs } });
  });
  afterAll(async () => {
    await ctx?.close();
    await proxy?.close();
    await bucket?.remove();
  });
  return {
    get ctx(): TestContext {
      return ctx!;
    },
    get proxy(): S3FaultProxy {
      return proxy!;
    },
  };
}
