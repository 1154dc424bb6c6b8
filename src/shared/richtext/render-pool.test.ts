import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { richTextFromInput } from './index.js';
import { OFF_THREAD_CHARS, RENDER_THREAD_NICE, renderRichText } from './render-pool.js';

const block = '## Section\n\nSome *emphasis*, a [link](https://example.com/page) and `code`.\n\n';
const large = block.repeat(Math.ceil((OFF_THREAD_CHARS * 4) / block.length));

/** The nice value of every thread of this process (Linux). */
function threadNices(): number[] {
  return readdirSync('/proc/self/task').map((t) => Number(readFileSync(`/proc/self/task/${t}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
}

describe('the rendering threads (decisions H24)', () => {
  it('render a large body to the same result as inline rendering', async () => {
    const inline = richTextFromInput({ bodyMarkdown: large });
    const threaded = await renderRichText({ bodyMarkdown: large });
    if (!inline?.ok || !threaded?.ok) throw new Error('both render');
    const { doc, ...rest } = inline.value;
    expect({ ...threaded.value, doc: threaded.value.doc }).toEqual({ ...rest, doc, docJson: JSON.stringify(doc) });
  });

  it.runIf(process.platform === 'linux')('run at a lower priority than the event loop', async () => {
    const rendering = renderRichText({ bodyMarkdown: large.repeat(4) });
    let seen = false;
    for (let i = 0; i < 100 && !seen; i++) {
      seen = threadNices().includes(RENDER_THREAD_NICE);
      if (!seen) await new Promise((r) => setTimeout(r, 20));
    }
    await rendering;
    expect(seen).toBe(true);
    expect(threadNices().filter((n) => n === RENDER_THREAD_NICE).length).toBeLessThan(threadNices().length);
  });

  it('keep the process alive while they render, and not once they are idle', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-pool-'));
    try {
      const script = path.join(dir, 'render.ts');
      writeFileSync(
        script,
        `import { renderRichText } from ${JSON.stringify(path.resolve(import.meta.dirname, 'render-pool.ts'))};
renderRichText({ bodyMarkdown: ${JSON.stringify(large)} }).then((r) => console.log('rendered', r?.ok));\n`,
      );
      const tsx = path.resolve(import.meta.dirname, '../../../node_modules/tsx/dist/cli.mjs');
      // No await in the script: only the busy thread keeps it running until the answer, and the
      // idle thread must then let it exit (it used to hang for ever).
      const { stdout } = await promisify(execFile)(process.execPath, [tsx, script], { timeout: 30_000 });
      expect(stdout.trim()).toBe('rendered true');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
