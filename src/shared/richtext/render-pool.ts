import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { type RenderedRichText, type RichTextDoc, type RichTextIssue, richTextFromInput } from './index.js';

type Input = Parameters<typeof richTextFromInput>[0];

/**
 * A rendered body ready to store: `docJson` is the document as JSON text. A rendering thread
 * sends only text back (the document's JSON is built there), so the event loop neither copies a
 * large object graph out of the message nor stringifies it; `doc` is parsed on first use.
 */
export type StoredRichText = Omit<RenderedRichText, 'doc'> & { docJson: string; readonly doc: RichTextDoc };
type Result = { ok: true; value: StoredRichText } | { ok: false; issues: RichTextIssue[] } | null;
/** What a rendering thread posts back: strings only. */
export type WireResult = { ok: true; value: Omit<StoredRichText, 'doc'> } | { ok: false; issues: RichTextIssue[] } | null;

/** Renders here, in the form a rendering thread answers (render-worker.ts). */
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
 * Bodies with more text than this render on a worker thread (decisions H24): converting,
 * validating, sanitising and rendering a 1 MB markdown body takes the event loop for hundreds of
 * milliseconds, which every other request of every site would wait for. Smaller bodies (nearly
 * all: a long article is 30-60 KB) render inline, where a thread hop would cost more than it saves.
 */
export const OFF_THREAD_CHARS = 64 * 1024;

/** The nice value of a rendering thread (render-worker.ts): below the event loop's priority. */
export const RENDER_THREAD_NICE = 10;

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

/** A worker that renders; under tsx (development, tests) the worker registers tsx to load TypeScript. */
function startWorker(): Worker {
  const url = new URL(`./render-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
  if (url.pathname.endsWith('.js')) return new Worker(url);
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`, { eval: true });
}

interface Pending {
  resolve(result: Result): void;
  reject(err: Error): void;
}

/**
 * A few rendering threads (one per spare core, at most two), started on first use, each given one
 * input at a time; queued inputs wait their turn. A thread that dies fails its input and is
 * replaced on the next one. Idle threads do not keep the process alive.
 */
class RenderPool {
  private readonly size = Math.max(1, Math.min(2, os.availableParallelism() - 1));
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending & { id: number }>();
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
      const worker = this.idle.pop() ?? (this.busy.size < this.size ? this.spawn() : null);
      if (!worker) return;
      const task = this.queue.shift()!;
      const id = this.nextId++;
      this.busy.set(worker, { id, resolve: task.resolve, reject: task.reject });
      // A thread at work keeps the process alive (its caller awaits it); an idle one does not.
      worker.ref();
      worker.postMessage({ id, input: task.input });
    }
  }

  private spawn(): Worker {
    const worker = startWorker();
    worker.on('message', (msg: { id: number; result?: WireResult; error?: string }) => {
      const task = this.busy.get(worker);
      if (!task || task.id !== msg.id) return;
      this.busy.delete(worker);
      this.idle.push(worker);
      worker.unref();
      if (msg.error !== undefined) task.reject(new Error(msg.error));
      else task.resolve(fromWire(msg.result ?? null));
      this.dispatch();
    });
    const fail = (err: Error) => {
      const task = this.busy.get(worker);
      this.busy.delete(worker);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      task?.reject(err);
      this.dispatch();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`rendering thread exited with code ${code}`)));
    // After the listeners: a 'message' listener added after unref() refs the thread's port again.
    worker.unref();
    return worker;
  }
}

let pool: RenderPool | null = null;

/** richTextFromInput, on a rendering thread when the input has more than OFF_THREAD_CHARS of text. */
export async function renderRichText(input: Input): Promise<Result> {
  const large = typeof input.bodyMarkdown === 'string' ? input.bodyMarkdown.length >= OFF_THREAD_CHARS : textSizeAtLeast(input.body, OFF_THREAD_CHARS);
  if (!large) {
    const result = richTextFromInput(input);
    return result?.ok ? { ok: true, value: { ...result.value, docJson: JSON.stringify(result.value.doc) } } : result;
  }
  pool ??= new RenderPool();
  return pool.run(input);
}
