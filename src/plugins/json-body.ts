import { StringDecoder } from 'node:string_decoder';
import { Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, preParsingHookHandler, RouteOptions } from 'fastify';
import { AppError, invalid } from '../shared/errors.js';
import { timeSlicer } from '../shared/time-slice.js';
import { buildInPieces, jsonShapeProblem, type ShapeProblem, scanUntil, startScan } from './json-scan.js';

/** Deepest nesting of objects and arrays a JSON body may have (rich-text documents, metadata, field data). */
export const MAX_JSON_DEPTH = 64;

const bodyError = (message: string, detail: string) => new AppError('VALIDATION_FAILED', { message, errors: { body: [detail] } });

/**
 * Most members one object of a body may have. V8 keeps an object of thousands of keys as a hash
 * table: parsing, walking and storing a 100,000-key `metadata` object (1.5 MB, within BODY_LIMIT)
 * held the event loop about 850 ms, and every other site's requests waited that long (decisions
 * HN5). No object of the API needs more; arrays (imports) are not objects and are not counted.
 */
export const MAX_OBJECT_KEYS = 1000;

export { jsonShapeProblem };

/** Whether the JSON text nests objects and arrays deeper than `max` (see jsonShapeProblem). */
export function nestsDeeperThan(text: string, max: number): boolean {
  return jsonShapeProblem(text, max) === 'deep';
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NON_ASCII = /[^ -~\t\n\r]/; // anything beyond printable ASCII and whitespace

/**
 * Every string of a parsed body, checked and normalised in one iterative walk: no NUL character
 * (PostgreSQL text cannot hold one), no lone surrogate (not text; PostgreSQL refuses it), and NFC
 * normalisation, so "Café" typed with a combining accent is the same name as with a precomposed é.
 */
export function cleanStrings(body: unknown): AppError | null {
  const walk = cleanWalk(body);
  for (;;) {
    const step = walk.next();
    if (step.done) return step.value;
  }
}

/** cleanStrings with a turn of the event loop whenever `slice` says so (a 9,000-row import is 9,000 objects). */
async function cleanStringsInSlices(body: unknown, slice: () => Promise<void> | undefined): Promise<AppError | null> {
  const walk = cleanWalk(body);
  for (;;) {
    const step = walk.next();
    if (step.done) return step.value;
    const wait = slice();
    if (wait) await wait;
  }
}

/** The walk of cleanStrings, pausing after each object or array. */
function* cleanWalk(body: unknown): Generator<undefined, AppError | null> {
  const stack: unknown[] = [body];
  while (stack.length) {
    const node = stack.pop();
    if (!node || typeof node !== 'object') continue;
    yield;
    const entries: Array<[string | number, unknown]> = Array.isArray(node) ? node.map((v, i) => [i, v]) : Object.entries(node);
    for (const [key, value] of entries) {
      if (typeof key === 'string' && key.includes('\u0000'))
        return bodyError('Text must not contain NUL characters.', 'must not contain NUL (\\u0000) characters');
      if (typeof value === 'string') {
        if (value.includes('\u0000')) return bodyError('Text must not contain NUL characters.', 'must not contain NUL (\\u0000) characters');
        if (!NON_ASCII.test(value)) continue;
        if (LONE_SURROGATE.test(value)) return bodyError('Text must be valid Unicode.', 'must not contain unpaired surrogate code points (\\ud800-\\udfff)');
        const normalised = value.normalize('NFC');
        if (normalised !== value) (node as Record<string | number, unknown>)[key] = normalised;
      } else if (value && typeof value === 'object') stack.push(value);
    }
  }
  return null;
}

type ContentTypeParser = Parameters<FastifyInstance['addContentTypeParser']>[2];

function shapeError(problem: ShapeProblem): AppError {
  return problem === 'deep'
    ? bodyError(`JSON nests deeper than ${MAX_JSON_DEPTH} levels.`, `must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`)
    : bodyError(`A JSON object has more than ${MAX_OBJECT_KEYS} keys.`, `must not hold an object with more than ${MAX_OBJECT_KEYS} keys`);
}

/**
 * From this many characters a body is scanned, parsed and checked in slices with turns of the
 * event loop between them (decisions HN9): a 9,000-row redirect import (520 KB) was one 20-35 ms
 * block of scanning, JSON.parse and the string walk, and every other site's request waited.
 */
export const SLICED_BODY_CHARS = 64 * 1024;

/** Characters scanned between two looks at the clock. */
const SCAN_STEP = 64 * 1024;

/**
 * Fastify's JSON parser (prototype-poisoning checks included), after a nesting check on the raw
 * text and followed by the string rules above. Malformed JSON stays a 400 `INVALID_JSON`
 * (decisions H12); every rule on well-formed JSON is a 422 naming `body`. Also for routes that
 * take JSON sent as `text/plain` (beacons, which cannot set a JSON content type).
 */
export function jsonTextParser(app: FastifyInstance): ContentTypeParser {
  const parse = app.getDefaultJsonParser('error', 'error');
  /** The default parser as a function: its value, or its error thrown. */
  const parseText = (request: unknown, text: string): unknown => {
    let out: { err: Error | null; body?: unknown } | undefined;
    parse(request as never, text, (err: Error | null, body?: unknown) => {
      out = { err, body };
    });
    if (out?.err) throw out.err;
    return out?.body;
  };

  /** A large body in slices: the scan a step at a time, the value a piece at a time (json-scan.ts), then the string walk. */
  async function parseInSlices(request: unknown, text: string): Promise<unknown> {
    const slice = timeSlicer();
    const scan = startScan();
    while (scan.at < text.length && !scan.problem && !scan.malformed) {
      const wait = slice();
      if (wait) await wait;
      scanUntil(scan, text, Math.min(text.length, scan.at + SCAN_STEP), MAX_JSON_DEPTH, MAX_OBJECT_KEYS);
    }
    if (scan.problem) throw shapeError(scan.problem);
    let body: unknown;
    let built = false;
    if (scan.root && !scan.malformed) {
      try {
        body = await buildInPieces(text, scan.root, (piece) => parseText(request, piece), slice);
        built = true;
      } catch {
        // Parsed whole below: the parser's own answer (a 400, or the value).
      }
    }
    if (!built) {
      const wait = slice();
      if (wait) await wait;
      body = parseText(request, text);
    }
    const invalid = await cleanStringsInSlices(body, slice);
    if (invalid) throw invalid;
    return body;
  }

  return ((request: unknown, raw: unknown, done: (err: Error | null, body?: unknown) => void) => {
    const text = raw as string;
    if (text.length >= SLICED_BODY_CHARS) {
      parseInSlices(request, text).then(
        (body) => done(null, body),
        (err: Error) => done(err, undefined),
      );
      return;
    }
    const problem = text.length > MAX_JSON_DEPTH * 2 ? jsonShapeProblem(text, MAX_JSON_DEPTH, MAX_OBJECT_KEYS) : null;
    if (problem) return done(shapeError(problem), undefined);
    parse(request as never, text, (err: Error | null, body?: unknown) => {
      if (err) return done(err, undefined);
      const invalid = cleanStrings(body);
      if (invalid) return done(invalid, undefined);
      done(null, body);
    });
  }) as ContentTypeParser;
}

export function registerJsonParser(app: FastifyInstance): void {
  const parser = jsonTextParser(app);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parser);
  // Only routes that take a body pay the hook (issue 37: no hook runs where it has nothing to do).
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH')) return;
    const existing = route.preParsing;
    route.preParsing = [scanWhileArriving, ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing])] as RouteOptions['preParsing'];
  });
}

/**
 * A large JSON body is scanned as it arrives (decisions HN12): one that nests too deep or holds
 * an object of too many keys is refused at the chunk that shows it, and the connection closed,
 * instead of after the whole body was read. A 100,000-key object (1.5 MB) showed its 1,001st key
 * in its first 16 KB, yet every such request cost reading, joining and decoding 1.5 MB, which two
 * clients sending it in a loop made every other site's reads wait behind (4x their p99).
 */
const scanWhileArriving: preParsingHookHandler = (request, _reply, payload, done) => {
  // Only bodies of a known length within the limit: one over it is answered 413 unread and then
  // drained (errors.ts), which a stream in between would hold back; a chunked body is parsed as before.
  const length = Number(request.headers['content-length']);
  const type = request.headers['content-type'];
  if (!(length >= SLICED_BODY_CHARS && length <= request.routeOptions.bodyLimit) || !type?.startsWith('application/json')) return done(null, payload);
  const decoder = new StringDecoder('utf8');
  const scan = startScan();
  let text = '';
  let received = 0;
  const scanning = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      (scanning as Transform & { receivedEncodedLength?: number }).receivedEncodedLength = received;
      if (!scan.problem) {
        text += decoder.write(chunk);
        scanUntil(scan, text, text.length, MAX_JSON_DEPTH, MAX_OBJECT_KEYS, true);
        if (scan.problem) {
          text = '';
          return callback(shapeError(scan.problem));
        }
      }
      callback(null, chunk);
    },
  });
  payload.pipe(scanning);
  done(null, scanning);
};

/**
 * Query strings and path parameters hold no NUL either (issue 36 item 8): PostgreSQL text
 * cannot hold one, so `?search=%00` failed there and matched on SQLite. Refused before
 * validation with a 422 naming the parameter, the same on both databases.
 */
export function registerUrlTextCheck(app: FastifyInstance): void {
  // On the routes that take a query or path parameters only, and a NUL reaches them only
  // percent-encoded: the common request pays one substring test (issue 37: no hook runs where
  // it has nothing to do).
  const refuseNul = function refuseNul(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
    if (!request.url.includes('%00')) return done();
    for (const values of [request.query, request.params]) {
      if (!values || typeof values !== 'object') continue;
      for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
        if ((Array.isArray(value) ? value : [value]).some((v) => typeof v === 'string' && v.includes('\u0000'))) {
          return done(invalid('VALIDATION_FAILED', name, 'must not contain NUL (\\u0000) characters'));
        }
      }
    }
    done();
  };
  app.addHook('onRoute', (route: RouteOptions) => {
    const takesQuery = (route.schema as { querystring?: unknown } | undefined)?.querystring !== undefined;
    if (!takesQuery && !route.url.includes(':') && !route.url.includes('*')) return;
    const existing = route.preValidation;
    route.preValidation = [refuseNul, ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing])] as RouteOptions['preValidation'];
  });
}
