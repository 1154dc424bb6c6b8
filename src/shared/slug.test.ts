import { describe, expect, it } from 'vitest';
import { findFreeSlug, slugify } from './slug.js';

describe('slugs (decisions G17)', () => {
  it('transliterates to lower-case ASCII words joined by hyphens', () => {
    expect(slugify('Crème Brûlée & Straße — 2026!')).toBe('creme-brulee-and-strasse-2026');
    expect(slugify('  --  ')).toBe('');
    expect(slugify('a'.repeat(300))).toHaveLength(255);
  });

  it('finds the first free suffix, asking for candidates in batches', async () => {
    const used = new Set(['post', ...Array.from({ length: 30 }, (_, i) => `post-${i + 2}`)]);
    const asked: string[][] = [];
    const slug = await findFreeSlug('post', async (c) => {
      asked.push(c);
      return new Set(c.filter((x) => used.has(x)));
    });
    expect(slug).toBe('post-32');
    expect(asked).toHaveLength(2);
    expect(asked[0]![0]).toBe('post');
    expect(await findFreeSlug('fresh', async () => new Set())).toBe('fresh');
  });

  it('keeps suffixed slugs within the length limit', async () => {
    const base = 'x'.repeat(10);
    const slug = await findFreeSlug(base, async (c) => new Set(c.slice(0, 3)), 10);
    expect(slug).toBe('xxxxxxxx-4');
  });
});
