import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-body.js';

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
