import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/suite.js';

/** About `bytes` of markdown: headings, emphasis, links and lists, so every renderer stage works. */
function bigMarkdown(bytes: number): string {
  const block = '## Section\n\nSome *emphasis*, a [link](https://example.com/page) and `code`.\n\n- one\n- two\n\n';
  return block.repeat(Math.ceil(bytes / block.length));
}

describe('heavy requests do not stall other tenants (issue 16 item 6)', () => {
  const ctx = useTestApp({ bodyLimit: 8 * 1024 * 1024 });

  it('renders a 950 KB markdown body off the event loop: another site is answered meanwhile', async () => {
    const heavy = await ctx.site();
    const other = await ctx.site();
    expect((await other.post('/v1/tags', { name: 'Quiet' })).status).toBe(201);
    const markdown = bigMarkdown(950 * 1024); // bodyMarkdown holds at most 1,000,000 characters
    // The longest the event loop is held while the create runs (every other request waits that
    // long): the largest gap between ticks of a 5 ms timer, up to the answer.
    let longestStallMs = 0;
    let last = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      longestStallMs = Math.max(longestStallMs, now - last);
      last = now;
    }, 5);
    const started = performance.now();
    const created = await heavy.post('/v1/contents', { type: 'post', title: 'Huge', bodyMarkdown: markdown });
    const took = performance.now() - started;
    longestStallMs = Math.max(longestStallMs, performance.now() - last);
    clearInterval(probe);
    expect(created.status).toBe(201);
    // Rendering inline held the loop for the whole request (about 2.5 s of 3 s here); on the
    // rendering thread what is left is storing and answering the 9 MB result (decisions H24).
    expect(longestStallMs).toBeLessThan(took * 0.6);
    expect((await other.get('/v1/tags')).status).toBe(200);
    // The rendering thread's result is the same as inline rendering's.
    const detail = await heavy.get(`/v1/contents/${created.body.data.id}`);
    expect(detail.body.bodyHtml).toContain('<h2>Section</h2>');
    expect(detail.body.bodyHtml).toContain('<a href="https://example.com/page"');
  });

  it('a body of 990,000 distinct words is stored and searchable by its first 100,000 characters, on both databases', async () => {
    const api = await ctx.site();
    const words = Array.from({ length: 990_000 }, (_, i) => `w${i.toString(36)}`);
    // As a document: 990 paragraphs of 1,000 words (bodyMarkdown is limited to 1,000,000 characters).
    const paragraphs = Array.from({ length: 990 }, (_, p) => ({
      type: 'paragraph',
      content: [{ type: 'text', text: words.slice(p * 1000, p * 1000 + 1000).join(' ') }],
    }));
    const res = await api.post('/v1/contents', { type: 'post', title: 'Vocabulary', body: { type: 'doc', content: paragraphs }, status: 'draft' });
    expect(res.status).toBe(201);
    const early = await api.get(`/v1/contents/search?q=${words[100]}`);
    expect(early.status).toBe(200);
    expect(early.body.data.map((c: { id: number }) => c.id)).toEqual([res.body.data.id]);
    // Beyond the indexed text: stored, but not found (decisions H19).
    const late = await api.get(`/v1/contents/search?q=${words[900_000]}`);
    expect(late.body.data).toEqual([]);
    const detail = await api.get(`/v1/contents/${res.body.data.id}`);
    expect(detail.body.bodyHtml.length).toBeGreaterThan(5_000_000);
    expect(detail.body.bodyHtml).toContain(words[989_999]);
  }, 60_000);
});
