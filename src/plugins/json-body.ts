import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import { AppError, invalid } from '../shared/errors.js';

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

/**
 * What is wrong with the shape of the JSON text, before anything parses or walks it: objects and
 * arrays nested deeper than `maxDepth` (a 5,000-level body would overflow a recursive validator
 * or serializer), or an object with more than `maxKeys` members. One pass over the text,
 * skipping strings; outside strings a `:` only ever follows an object's key.
 */
export function jsonShapeProblem(text: string, maxDepth: number, maxKeys = Number.POSITIVE_INFINITY): 'deep' | 'wide' | null {
  const keys: number[] = [0];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) i = stringEnd(text, i);
    else if (c === 58 /* : */) {
      if (++keys[depth]! > maxKeys) return 'wide';
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > maxDepth) return 'deep';
      keys[depth] = 0;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return null;
}

/** Whether the JSON text nests objects and arrays deeper than `max` (see jsonShapeProblem). */
export function nestsDeeperThan(text: string, max: number): boolean {
  return jsonShapeProblem(text, max) === 'deep';
}

/**
 * The index of the quote closing the string opened at `open` (or the text's end): found with
 * indexOf, not character by character, as a 1 MB body is mostly one string (5 ms -> 0.1 ms).
 * A quote preceded by an odd number of backslashes is escaped.
 */
function stringEnd(text: string, open: number): number {
  for (let at = text.indexOf('"', open + 1); at !== -1; at = text.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 92 /* \ */) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return text.length;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NON_ASCII = /[^ -~\t\n\r]/; // anything beyond printable ASCII and whitespace

/**
 * Every string of a parsed body, checked and normalised in one iterative walk: no NUL character
 * (PostgreSQL text cannot hold one), no lone surrogate (not text; PostgreSQL refuses it), and NFC
 * normalisation, so "Café" typed with a combining accent is the same name as with a precomposed é.
 */
export function cleanStrings(body: unknown): AppError | null {
  const stack: unknown[] = [body];
  while (stack.length) {
    const node = stack.pop();
    if (!node || typeof node !== 'object') continue;
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

/**
 * Fastify's JSON parser (prototype-poisoning checks included), after a nesting check on the raw
 * text and followed by the string rules above. Malformed JSON stays a 400 `INVALID_JSON`
 * (decisions H12); every rule on well-formed JSON is a 422 naming `body`. Also for routes that
 * take JSON sent as `text/plain` (beacons, which cannot set a JSON content type).
 */
export function jsonTextParser(app: FastifyInstance): ContentTypeParser {
  const parse = app.getDefaultJsonParser('error', 'error');
  return ((request: unknown, raw: unknown, done: (err: Error | null, body?: unknown) => void) => {
    const text = raw as string;
    const problem = text.length > MAX_JSON_DEPTH * 2 ? jsonShapeProblem(text, MAX_JSON_DEPTH, MAX_OBJECT_KEYS) : null;
    if (problem === 'deep') {
      return done(
        bodyError(`JSON nests deeper than ${MAX_JSON_DEPTH} levels.`, `must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels`),
        undefined,
      );
    }
    if (problem === 'wide') {
      return done(
        bodyError(`A JSON object has more than ${MAX_OBJECT_KEYS} keys.`, `must not hold an object with more than ${MAX_OBJECT_KEYS} keys`),
        undefined,
      );
    }
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
}

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
