import { describe, expect, it } from 'vitest';
import { jsonShapeProblem, nestsDeeperThan } from './json-body.js';

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
