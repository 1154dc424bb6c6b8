import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { richTextFromInput } from './index.js';
import { OFF_THREAD_CHARS, RENDER_PROCESS_NICE, renderRichText } from './render-pool.js';

const block = '## Section\n\nSome *emphasis*, a [link](https://example.com/page) and `code`.\n\n';
const large = block.repeat(Math.ceil((OFF_THREAD_CHARS * 4) / block.length));

/** The nice value of every thread of a process (Linux). */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((t) => Number(readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
}

/** The rendering processes started by this process (Linux). */
function rendererPids(): number[] {
  const children = readdirSync('/proc/self/task').flatMap((t) =>
    readFileSync(`/proc/self/task/${t}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number),
  );
  return children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('render-process');
    } catch {
      return false; // exited meanwhile
    }
  });
}

async function until(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe('the rendering processes (decisions H24)', () => {
  it('render a large body to the same result as inline rendering', async () => {
    const inline = richTextFromInput({ bodyMarkdown: large });
    const threaded = await renderRichText({ bodyMarkdown: large });
    if (!inline?.ok || !threaded?.ok) throw new Error('both render');
    const { doc, ...rest } = inline.value;
    expect({ ...threaded.value, doc: threaded.value.doc }).toEqual({ ...rest, doc, docJson: JSON.stringify(doc) });
  });

  it('answer an invalid body with its issues, as inline rendering does', async () => {
    const body = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x'.repeat(OFF_THREAD_CHARS), marks: [{ type: 'blink' }] }] }] };
    const inline = richTextFromInput({ body });
    expect(inline?.ok).toBe(false);
    expect(await renderRichText({ body })).toEqual(inline);
  });

  it.runIf(process.platform === 'linux')('run with every thread, garbage collectors included, at the lowest priority', async () => {
    // This process's own main thread (its helper threads run lower on purpose, decisions HN14).
    const ownNice = () => Number(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const ownBefore = ownNice();
    const rendering = renderRichText({ bodyMarkdown: large.repeat(4) });
    expect(await until(() => rendererPids().length > 0)).toBe(true);
    for (const pid of rendererPids()) {
      const nices = threadNices(pid);
      // V8's helper threads as well as the main one: a node process has several.
      expect(nices.length).toBeGreaterThan(3);
      expect(new Set(nices)).toEqual(new Set([RENDER_PROCESS_NICE]));
    }
    expect(ownNice()).toBe(ownBefore);
    await rendering;
  });

  it.runIf(process.platform === 'linux')('fail the input of a rendering process that dies, and render the next input in a new one', async () => {
    await renderRichText({ bodyMarkdown: large });
    const rendering = renderRichText({ bodyMarkdown: large.repeat(8) });
    expect(await until(() => rendererPids().length > 0)).toBe(true);
    const [victim] = rendererPids();
    process.kill(victim!, 'SIGKILL');
    await expect(rendering).rejects.toThrow(/rendering process exited with SIGKILL/);
    const next = await renderRichText({ bodyMarkdown: large });
    expect(next?.ok).toBe(true);
    expect(rendererPids()).not.toContain(victim);
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
