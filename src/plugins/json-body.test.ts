import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { jsonShapeProblem, jsonTextParser, nestsDeeperThan, SLICED_BODY_CHARS } from './json-body.js';
import { buildInPieces, type Container, scanUntil, startScan } from './json-scan.js';

describe('nestsDeeperThan', () => {
  const nested = (depth: number, leaf = '1') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;

  it('counts objects and arrays, up to and past the limit', () => {
    expect(nestsDeeperThan(nested(3), 3)).toBe(false);
    expect(nestsDeeperThan(nested(4), 3)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[{"c":1}]}}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[{"c":1}]}}', 3)).toBe(true);
    expect(nestsDeeperThan('[[1],[2],[3]]', 2)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan(`["${'[{'.repeat(50)}"]`, 1)).toBe(false);
    expect(nestsDeeperThan(String.raw`["a \"[[[[\" b"]`, 1)).toBe(false);
    expect(nestsDeeperThan(String.raw`["a \\\"[[[["]`, 1)).toBe(false);
    // An even run of backslashes escapes itself: the quote after it closes the string.
    expect(nestsDeeperThan(String.raw`["a\\", [[1]]]`, 2)).toBe(true);
    expect(nestsDeeperThan(String.raw`["a\\\\", [1]]`, 2)).toBe(false);
    expect(nestsDeeperThan(nested(3, String.raw`"x\\"`), 2)).toBe(true);
  });

  it('treats an unterminated string as ending the text', () => {
    expect(nestsDeeperThan('["[[[[', 1)).toBe(false);
  });

  it('scans a 1 MB string value without walking it character by character', () => {
    const body = `{"bodyMarkdown":"${'## Section [x](y) {z}\\n'.repeat(45_000)}","metadata":${nested(70)}}`;
    expect(nestsDeeperThan(body, 64)).toBe(true);
    expect(nestsDeeperThan(body, 71)).toBe(false);
  });
});

describe('jsonShapeProblem', () => {
  const object = (keys: number) => `{${Array.from({ length: keys }, (_, i) => `"k${i}":${i}`).join(',')}}`;

  it('counts the members of each object on its own, at every depth, and not the elements of arrays', () => {
    expect(jsonShapeProblem(object(3), 64, 3)).toBe(null);
    expect(jsonShapeProblem(object(4), 64, 3)).toBe('wide');
    // Three objects of three keys each, in an array and nested: none is too wide.
    expect(jsonShapeProblem(`[${object(3)},${object(3)}]`, 64, 3)).toBe(null);
    expect(jsonShapeProblem(`{"a":${object(3)},"b":1,"c":2}`, 64, 3)).toBe(null);
    expect(jsonShapeProblem(`{"a":${object(4)}}`, 64, 3)).toBe('wide');
    expect(jsonShapeProblem(`[${Array.from({ length: 50 }, (_, i) => i).join(',')}]`, 64, 3)).toBe(null);
  });

  it('ignores colons inside strings and keys', () => {
    expect(jsonShapeProblem(`{"a:b:c:d":"x:y:z:w"}`, 64, 1)).toBe(null);
    expect(jsonShapeProblem(String.raw`{"a\":":"\":", "b":1}`, 64, 1)).toBe('wide');
  });
});

describe('jsonTextParser on large bodies (in pieces, decisions HN9)', () => {
  const parser = jsonTextParser(Fastify());
  const parse = (text: string) =>
    new Promise<{ err: (Error & { code?: string; statusCode?: number }) | null; body?: unknown }>((resolve) => {
      (parser as unknown as (req: unknown, body: string, done: (err: Error | null, body?: unknown) => void) => void)({}, text, (err, body) =>
        resolve({ err, body }),
      );
    });
  const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ sourcePath: `/old/${i}`, targetUrl: `/new/${i}`, note: i % 7 ? null : `ü ${i}` }));

  it('gives what JSON.parse gives, whatever the layout', async () => {
    const texts = [
      JSON.stringify({ entries: entries(9000) }),
      JSON.stringify({ entries: entries(9000) }, null, 2),
      // Big members before, between and after small ones; arrays of arrays; duplicate keys (the last wins, in the first's place).
      `{"a":1,"big":${JSON.stringify(entries(3000))},"b":"x","c":{"inner":${JSON.stringify(entries(2000))},"z":[1,2]},"a":2}`,
      `[${JSON.stringify(entries(2000))} , \n ${JSON.stringify(entries(2000))},3]`,
      ` \n${JSON.stringify(Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`k${i}`, 'v'.repeat(100)])))}\t`,
      // Keys with colons, quotes and escapes next to a big value.
      `{"we:ird \\" key":${JSON.stringify(entries(2000))}, "1": 1, "0": ${JSON.stringify(entries(1000))}}`,
    ];
    for (const text of texts) {
      expect(text.length).toBeGreaterThanOrEqual(SLICED_BODY_CHARS);
      const { err, body } = await parse(text);
      expect(err).toBe(null);
      expect(body).toEqual(JSON.parse(text));
      expect(Object.keys(body as object)).toEqual(Object.keys(JSON.parse(text)));
      // Built from its pieces, not parsed whole after all.
      const scan = startScan();
      scanUntil(scan, text, text.length, 64, 1000);
      expect(scan.root).not.toBe(null);
      const pieces = (c: Container): number => c.parts.reduce((n, p) => n + (p.child ? pieces(p.child) : 1), 0);
      expect(pieces(scan.root!)).toBeGreaterThan(1);
      expect(await buildInPieces(text, scan.root!, JSON.parse, () => undefined)).toEqual(JSON.parse(text));
    }
  });

  it('refuses what JSON.parse refuses, with the parser own error (400 INVALID_JSON)', async () => {
    const big = JSON.stringify(entries(3000));
    const texts = [
      `{"entries":${big.slice(0, -1)},]}`, // trailing comma
      `{"entries":${big.slice(0, -1)},,{"a":1}]}`, // empty element
      `{"entries":${big}} x`, // text after the value
      `{"entries":${big} "more":${big}}`, // no comma between members
      `[${big} ${big}]`, // no comma between elements
      `{"entries":${big.slice(0, -1)}}}`, // brackets that do not match
      `{"entries" ${big}}`, // no colon
      `{"entries":${big}`, // cut short
    ];
    for (const text of texts) {
      const { err } = await parse(text);
      expect(err?.code, text.slice(-40)).toBe('FST_ERR_CTP_INVALID_JSON_BODY');
      // The pieces themselves never vouch for it.
      const scan = startScan();
      scanUntil(scan, text, text.length, 64, 1000);
      if (scan.root && !scan.malformed) await expect(buildInPieces(text, scan.root, JSON.parse, () => undefined)).rejects.toThrow();
    }
  });

  it('keeps the prototype checks on a member parsed on its own', async () => {
    for (const text of [`{"__proto__":${JSON.stringify(entries(3000))}}`, `{"constructor":{"prototype":${JSON.stringify(entries(3000))}}}`]) {
      const { err } = await parse(text);
      expect(err).not.toBe(null);
      expect(err?.code).toBe('FST_ERR_CTP_INVALID_JSON_BODY');
    }
  });

  it('checks the strings and the shape of a large body', async () => {
    const nul = await parse(JSON.stringify({ entries: [...entries(3000), { sourcePath: '/a\u0000', targetUrl: '/b' }] }));
    expect(nul.err?.message).toBe('Text must not contain NUL characters.');
    const wide = await parse(JSON.stringify({ entries: entries(3000), metadata: Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, i])) }));
    expect(wide.err?.message).toBe('A JSON object has more than 1000 keys.');
    const nfc = await parse(JSON.stringify({ entries: [...entries(3000), { note: 'Cafe\u0301' }] }));
    expect((nfc.body as { entries: Array<{ note?: string }> }).entries[3000]!.note).toBe('Café');
  });
});

describe('scanUntil on a body as it arrives (decisions HN12)', () => {
  /** Scans `text` given `cuts` as the ends of what has arrived, then whole: the scan's state at the end. */
  const scanArriving = (text: string, cuts: number[], maxDepth: number, maxKeys: number) => {
    const scan = startScan();
    for (const cut of cuts) {
      scanUntil(scan, text.slice(0, cut), cut, maxDepth, maxKeys, true);
      if (scan.problem) return scan;
    }
    scanUntil(scan, text, text.length, maxDepth, maxKeys);
    return scan;
  };
  const texts = [
    '{"a":"x\\"{[:,","b":[1,{"c":"\\\\"},[]],"d":{"e":"}"}}',
    JSON.stringify({ k: Array.from({ length: 40 }, (_, i) => ({ [`q"${i}`]: `v\\${i}` })) }),
    '[[[[1]]]]',
    '{"a":1,"b":2,"c":3}',
    '{"a":[1,2}',
  ];

  it('finds at every cut what the whole text shows: the same problem, depth and malformed brackets', () => {
    for (const text of texts) {
      for (const [maxDepth, maxKeys] of [
        [64, 1000],
        [3, 2],
      ] as const) {
        const whole = startScan();
        scanUntil(whole, text, text.length, maxDepth, maxKeys);
        for (let cut = 1; cut < text.length; cut++) {
          const arriving = scanArriving(text, [cut], maxDepth, maxKeys);
          expect({ problem: arriving.problem, malformed: arriving.malformed, depth: arriving.stack.length }, `${text} cut at ${cut}`).toEqual({
            problem: whole.problem,
            malformed: whole.malformed,
            depth: whole.stack.length,
          });
        }
      }
    }
  });

  it('stops before a string that has not closed yet and never reads structure inside it', () => {
    const scan = startScan();
    const text = '{"a":"{{{{';
    scanUntil(scan, text, text.length, 2, 1000, true);
    expect(scan.problem).toBeNull();
    expect(scan.at).toBe(5);
    expect(scan.malformed).toBe(false);
    const more = `${text}{"}`;
    scanUntil(scan, more, more.length, 2, 1000);
    expect(scan.problem).toBeNull();
    expect(scan.malformed).toBe(false);
  });
});
