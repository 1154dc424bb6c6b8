import { type ChildProcess, fork } from 'node:child_process';
import os from 'node:os';
import { type RenderedBody, type RichTextDoc, type RichTextIssue, richTextFromInput } from './index.js';

type Input = Parameters<typeof richTextFromInput>[0];

/**
 * A rendered body ready to store: `docJson` is the document as JSON text. A rendering process
 * sends only text back (the document's JSON is built there), so the event loop neither copies a
 * large object graph out of the message nor stringifies it; `doc` is parsed on first use.
 */
export type StoredRichText = Omit<RenderedBody, 'doc'> & { docJson: string; readonly doc: RichTextDoc };
type Result = { ok: true; value: StoredRichText } | { ok: false; issues: RichTextIssue[] } | null;
/** What a rendering process sends back: strings only. */
export type WireResult = { ok: true; value: Omit<StoredRichText, 'doc'> } | { ok: false; issues: RichTextIssue[] } | null;

/** Renders here, in the form a rendering process answers (render-process.ts). */
export function renderForWire(input: Input): WireResult {
  const result = richTextFromInput(input);
  if (!result?.ok) return result;
  const { doc, ...rest } = result.value;
  return { ok: true, value: { ...rest, docJson: JSON.stringify(doc) } };
}

function fromWire(wire: WireResult): Result {
  if (!wire?.ok) return wire;
  const { docJson } = wire.value;
  let doc: RichTextDoc | undefined;
  return {
    ok: true,
    value: {
      ...wire.value,
      get doc() {
        doc ??= JSON.parse(docJson) as RichTextDoc;
        return doc;
      },
    },
  };
}

/**
 * Bodies with more text than this render in the rendering process (decisions H24): converting,
 * validating, sanitising and rendering a 1 MB markdown body takes seconds of CPU, which every
 * other request of every site would wait for. Smaller bodies (nearly all: a long article is
 * 30-60 KB) render inline, where the hop would cost more than it saves.
 */
export const OFF_THREAD_CHARS = 64 * 1024;

/** The nice value of every thread of the rendering process (render-process.ts): the lowest. */
export const RENDER_PROCESS_NICE = 19;

/** A rendering process idle this long exits (its ~50 MB go back); the next large body starts one. */
export const RENDERER_IDLE_EXIT_MS = 60_000;

/** Characters of text in `value`, counted only up to `limit` (a 1 MB document costs no full walk). */
export function textSizeAtLeast(value: unknown, limit: number): boolean {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length && size < limit) {
    const node = stack.pop();
    if (typeof node === 'string') size += node.length;
    else if (Array.isArray(node)) for (const v of node) stack.push(v);
    else if (node && typeof node === 'object') for (const v of Object.values(node)) stack.push(v);
  }
  return size >= limit;
}

/**
 * A rendering process; under tsx (development, tests) it loads TypeScript through tsx. Messages
 * use V8's serialisation, which copies strings as they are (JSON would escape 7 MB of document
 * JSON inside a JSON message and parse it back on the event loop).
 */
function startRenderer(): ChildProcess {
  const ts = import.meta.url.endsWith('.ts');
  const url = new URL(`./render-process${ts ? '.ts' : '.js'}`, import.meta.url);
  return fork(url, [], { serialization: 'advanced', execArgv: ts ? ['--import', 'tsx'] : [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

interface Pending {
  resolve(result: Result): void;
  reject(err: Error): void;
}

/**
 * Rendering processes (one per spare core, at most two), started on first use, each given one
 * input at a time; queued inputs wait their turn. A process rather than a worker thread: a
 * thread's isolate shares V8's garbage-collection helper threads with the event loop's, at full
 * priority, and the garbage of a 1 MB body kept both cores busy (another site's read p99 went
 * from 7 to 13-15 ms while one site created such posts; with the process at nice 19, 9 ms).
 * A process that dies fails its input and is replaced on the next one; an idle one does not keep
 * this process alive, and exits after RENDERER_IDLE_EXIT_MS.
 */
class RenderPool {
  private readonly size = Math.max(1, Math.min(2, os.availableParallelism() - 1));
  private readonly idle: ChildProcess[] = [];
  private readonly busy = new Map<ChildProcess, Pending & { id: number }>();
  private readonly idleTimers = new Map<ChildProcess, NodeJS.Timeout>();
  private readonly queue: Array<{ input: Input } & Pending> = [];
  private nextId = 1;

  run(input: Input): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length) {
      const renderer = this.idle.pop() ?? (this.busy.size < this.size ? this.spawn() : null);
      if (!renderer) return;
      const task = this.queue.shift()!;
      const id = this.nextId++;
      clearTimeout(this.idleTimers.get(renderer));
      this.busy.set(renderer, { id, resolve: task.resolve, reject: task.reject });
      // A process at work keeps this one alive (its caller awaits it); an idle one does not.
      renderer.ref();
      renderer.channel?.ref();
      renderer.send({ id, input: task.input });
    }
  }

  private rest(renderer: ChildProcess): void {
    this.idle.push(renderer);
    renderer.unref();
    renderer.channel?.unref();
    const timer = setTimeout(() => {
      // Out of the idle list first, so no input is sent to it while it exits.
      this.idle.splice(this.idle.indexOf(renderer), 1);
      renderer.disconnect();
    }, RENDERER_IDLE_EXIT_MS);
    timer.unref();
    this.idleTimers.set(renderer, timer);
  }

  private spawn(): ChildProcess {
    const renderer = startRenderer();
    renderer.on('message', (msg: { id: number; result?: WireResult; error?: string }) => {
      const task = this.busy.get(renderer);
      if (!task || task.id !== msg.id) return;
      this.busy.delete(renderer);
      this.rest(renderer);
      if (msg.error !== undefined) task.reject(new Error(msg.error));
      else task.resolve(fromWire(msg.result ?? null));
      this.dispatch();
    });
    let failed = false;
    const fail = (err: Error) => {
      // 'error' and 'exit' may both come: the process is forgotten once.
      if (failed) return;
      failed = true;
      clearTimeout(this.idleTimers.get(renderer));
      this.idleTimers.delete(renderer);
      const task = this.busy.get(renderer);
      this.busy.delete(renderer);
      const at = this.idle.indexOf(renderer);
      if (at >= 0) this.idle.splice(at, 1);
      if (renderer.connected) renderer.disconnect();
      task?.reject(err);
      this.dispatch();
    };
    renderer.on('error', fail);
    renderer.on('exit', (code, signal) => fail(new Error(`rendering process exited with ${signal ?? `code ${code}`}`)));
    renderer.unref();
    renderer.channel?.unref();
    return renderer;
  }
}

let pool: RenderPool | null = null;

/** richTextFromInput, in a rendering process when the input has more than OFF_THREAD_CHARS of text. */
export async function renderRichText(input: Input): Promise<Result> {
  const large = typeof input.bodyMarkdown === 'string' ? input.bodyMarkdown.length >= OFF_THREAD_CHARS : textSizeAtLeast(input.body, OFF_THREAD_CHARS);
  if (!large) {
    const result = richTextFromInput(input);
    return result?.ok ? { ok: true, value: { ...result.value, docJson: JSON.stringify(result.value.doc) } } : result;
  }
  pool ??= new RenderPool();
  return pool.run(input);
}
