import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { BlockedAddressError, guardedLookup, resolvePublic, urlHost } from './net-guard.js';

/**
 * POSTs to addresses a site's admin typed in (webhooks, captcha verification): checked against
 * private and metadata addresses at the moment of each request (decisions W10).
 */
/** Response bodies are read up to this many bytes, then the connection is dropped. */
export const RESPONSE_READ_LIMIT = 4096;
/** What the attempt log keeps of a response body. */
export const RESPONSE_EXCERPT_LIMIT = 1024;

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  bodyExcerpt: string | null;
  /** Retry-After of the answer, in ms, when it gave one. */
  retryAfterMs: number | null;
}

/** Retry-After as seconds or an HTTP date, in ms from now; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  const text = raw.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * One POST, never following redirects, on a fresh connection (a pooled socket would skip the
 * address check) to an address checked at this very attempt. Success is a 2xx answered within
 * `timeoutMs`; at most RESPONSE_READ_LIMIT bytes of the answer are read. Never throws; the
 * result's `error` holds no header and no secret.
 */
export async function postGuarded(
  url: string,
  headers: Record<string, string>,
  body: string,
  settings: { timeoutMs: number; allowPrivateNetwork: boolean },
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const fail = (error: string): AttemptResult => ({ ok: false, statusCode: null, durationMs: elapsed(), error, bodyExcerpt: null, retryAfterMs: null });
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return fail('invalid URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return fail('URL must use http or https');
  const guard = { allowPrivate: settings.allowPrivateNetwork };
  // An IP literal never reaches `lookup`: check it here. Names are resolved and checked by guardedLookup.
  if (isIP(urlHost(target))) {
    try {
      await resolvePublic(urlHost(target), guard);
    } catch (err) {
      return fail(`blocked: ${(err as Error).message}`);
    }
  }

  const transport = target.protocol === 'https:' ? https : http;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let bodyDone: (() => void) | null = null;
    const finish = (result: Omit<AttemptResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ ...result, durationMs: elapsed() });
    };
    const req = transport.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        // A fresh connection every time: a pooled keep-alive socket would skip the lookup, and so the address check.
        agent: false,
        lookup: guardedLookup(guard) as never,
      },
      (res) => {
        const code = res.statusCode ?? 0;
        const ok = code >= 200 && code < 300;
        const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
        const error = ok ? null : code >= 300 && code < 400 ? `HTTP ${code}: redirects are not followed` : `HTTP ${code}`;
        const chunks: Buffer[] = [];
        let size = 0;
        bodyDone = () => {
          const excerpt = Buffer.concat(chunks)
            .subarray(0, RESPONSE_EXCERPT_LIMIT)
            .toString('utf8')
            .replace(/\uFFFD+$/, '');
          finish({ ok, statusCode: code, error, bodyExcerpt: excerpt.length ? excerpt : null, retryAfterMs });
        };
        res.on('data', (chunk: Buffer) => {
          if (size >= RESPONSE_READ_LIMIT) return;
          chunks.push(chunk);
          size += chunk.length;
          // Enough read: drop the connection rather than read a large (or endless) body.
          if (size >= RESPONSE_READ_LIMIT) bodyDone!();
        });
        res.on('end', () => bodyDone!());
        res.on('error', () => bodyDone!());
        res.on('close', () => bodyDone!());
      },
    );
    // The status decides: an answer that came in time counts even if its body then dawdles.
    const timer = setTimeout(() => {
      if (bodyDone) return bodyDone();
      finish({ ok: false, statusCode: null, error: `timeout: no answer within ${settings.timeoutMs} ms`, bodyExcerpt: null, retryAfterMs: null });
    }, settings.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (bodyDone) return bodyDone();
      const message = err instanceof BlockedAddressError ? `blocked: ${err.message}` : `${err.code ?? 'network error'}: ${err.message}`;
      finish({ ok: false, statusCode: null, error: message.slice(0, 500), bodyExcerpt: null, retryAfterMs: null });
    });
    req.on('close', () => {
      if (bodyDone) return bodyDone();
      finish({ ok: false, statusCode: null, error: 'connection closed without an answer', bodyExcerpt: null, retryAfterMs: null });
    });
    req.end(body);
  });
}

export class FetchRefused extends Error {}

/**
 * A GET of an address a user typed in (media upload-from-url, decisions M2): http(s) only, every
 * address checked at every hop (IP literals here, names through the guarded lookup), at most
 * `maxRedirects` redirects. One deadline, `timeoutMs` from the call, bounds the whole fetch: every
 * hop, the answer's headers (a server may send them a byte a second) and the body; past it the
 * request, or the body the caller reads, fails with a `FetchRefused`. Resolves with the 2xx
 * answer's body stream (the caller caps what it reads); refusals are a `FetchRefused` saying why.
 */
export async function getGuarded(
  url: string,
  settings: { timeoutMs: number; allowPrivateNetwork: boolean; maxRedirects: number },
): Promise<{ body: http.IncomingMessage; finalUrl: URL }> {
  const guard = { allowPrivate: settings.allowPrivateNetwork };
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new FetchRefused('is not a URL');
  }
  const late = () => new FetchRefused(`took longer than ${settings.timeoutMs} ms`);
  // What the deadline ends: the request waiting for its answer, then the body being read.
  let current: { destroy(err: Error): void } | null = null;
  let expired = false;
  const deadline = setTimeout(() => {
    expired = true;
    current?.destroy(late());
  }, settings.timeoutMs);
  try {
    for (let hop = 0; ; hop++) {
      if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new FetchRefused('must use http or https');
      if (isIP(urlHost(target))) {
        try {
          await resolvePublic(urlHost(target), guard);
        } catch (err) {
          throw new FetchRefused(`points to an address that is not public (${(err as Error).message})`);
        }
      }
      if (expired) throw late();
      const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const transport = target.protocol === 'https:' ? https : http;
        const req = transport.get(
          target,
          { agent: false, lookup: guardedLookup(guard) as never, headers: { accept: '*/*', 'user-agent': 'Cairn media fetch' } },
          resolve,
        );
        current = req;
        req.on('error', (err) =>
          reject(
            err instanceof BlockedAddressError
              ? new FetchRefused(`points to an address that is not public (${err.message})`)
              : err instanceof FetchRefused
                ? err
                : new FetchRefused(`cannot be fetched (${(err as NodeJS.ErrnoException).code ?? err.message})`),
          ),
        );
      });
      current = res;
      const code = res.statusCode ?? 0;
      if (code >= 300 && code < 400 && res.headers.location) {
        res.destroy();
        if (hop >= settings.maxRedirects) throw new FetchRefused(`redirects more than ${settings.maxRedirects} times`);
        target = new URL(res.headers.location, target);
        continue;
      }
      if (code < 200 || code >= 300) {
        res.destroy();
        throw new FetchRefused(`answered HTTP ${code}`);
      }
      // The deadline now bounds the body; it ends with the body, however the caller stops reading.
      res.once('close', () => clearTimeout(deadline));
      return { body: res, finalUrl: target };
    }
  } catch (err) {
    clearTimeout(deadline);
    throw err;
  }
}
