import { createHash } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { once } from 'node:events';
import { StringDecoder } from 'node:string_decoder';

/**
 * The container of a site bundle: a POSIX ustar archive, gzip-compressed (`tar xzf` opens it).
 * Written and read as a stream, one entry at a time, so memory stays flat whatever the size.
 * Only regular files, names up to 100 bytes, sizes up to 8 GiB (11 octal digits): all a bundle
 * needs. The layout inside is described in docs/site-bundles.md.
 */
export class BundleError extends Error {}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(name: string, size: number): Buffer {
  const bytes = Buffer.from(name, 'utf8');
  if (bytes.length > 100) throw new Error(`bundle entry name too long: ${name}`);
  const h = Buffer.alloc(BLOCK, 0);
  bytes.copy(h, 0);
  h.write(octal(0o644, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(0, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write('0', 156, 'ascii');
  h.write('ustar\u000000', 257, 'ascii');
  h.write(octal(checksum(h), 7), 148, 'ascii');
  h[155] = 0x20;
  return h;
}

function checksum(h: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
  return sum;
}

async function write(out: Writable, chunk: Buffer): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

/** Writes entries to `out` (a gzip stream in front of the file); `finish` ends the archive. */
export class TarWriter {
  constructor(private readonly out: Writable) {}

  /** Adds an entry of exactly `size` bytes from `body`; answers the SHA-256 (hex) of its bytes. */
  async add(name: string, size: number, body: AsyncIterable<Buffer | string> | Iterable<Buffer | string>): Promise<string> {
    await write(this.out, header(name, size));
    const hash = createHash('sha256');
    let written = 0;
    for await (const piece of body) {
      const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
      written += chunk.length;
      if (written > size) throw new Error(`bundle entry ${name} grew while it was written`);
      hash.update(chunk);
      await write(this.out, chunk);
    }
    if (written !== size) throw new Error(`bundle entry ${name} has ${written} bytes, ${size} expected`);
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad) await write(this.out, Buffer.alloc(pad));
    return hash.digest('hex');
  }

  async finish(): Promise<void> {
    await write(this.out, Buffer.alloc(BLOCK * 2));
    this.out.end();
    await once(this.out, 'finish');
  }
}

export interface TarEntry {
  name: string;
  size: number;
  /** The entry's bytes; what a reader leaves unread is skipped. */
  body: AsyncIterable<Buffer>;
}

/** Reads exact byte counts from a stream of chunks. */
class ByteReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private done = false;
  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<boolean> {
    while (this.length < n && !this.done) {
      const next = await this.source.next();
      if (next.done) this.done = true;
      else {
        this.buffered.push(next.value);
        this.length += next.value.length;
      }
    }
    return this.length >= n;
  }

  /** Up to `max` bytes (at least one), or null at the end. */
  async some(max: number): Promise<Buffer | null> {
    if (!(await this.fill(1))) return null;
    const first = this.buffered[0]!;
    const take = Math.min(max, first.length);
    if (take === first.length) this.buffered.shift();
    else this.buffered[0] = first.subarray(take);
    this.length -= take;
    return first.subarray(0, take);
  }

  async exactly(n: number): Promise<Buffer | null> {
    if (!(await this.fill(n))) return this.length === 0 ? null : Promise.reject(new BundleError('the archive ends in the middle of an entry'));
    const all = Buffer.concat(this.buffered);
    this.buffered = all.length > n ? [all.subarray(n)] : [];
    this.length -= n;
    return all.subarray(0, n);
  }
}

/** The entries of an archive, in order. A damaged gzip stream or tar header is a BundleError. */
export async function* readTar(input: Readable): AsyncGenerator<TarEntry> {
  const reader = new ByteReader(
    (async function* () {
      try {
        for await (const chunk of input) yield chunk as Buffer;
      } catch (err) {
        throw new BundleError(`the archive is damaged (${(err as Error).message})`);
      }
    })(),
  );
  for (;;) {
    const h = await reader.exactly(BLOCK);
    if (!h) throw new BundleError('the archive ends without its end marker');
    if (h.every((b) => b === 0)) return;
    const stored = Number.parseInt(h.subarray(148, 156).toString('ascii').replace(/\0.*$/s, '').trim(), 8);
    if (stored !== checksum(h)) throw new BundleError('the archive is damaged (an entry header fails its checksum)');
    const name = h.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    const size = Number.parseInt(h.subarray(124, 136).toString('ascii').replace(/\0.*$/s, '').trim(), 8);
    if (!Number.isFinite(size) || size < 0) throw new BundleError(`the archive is damaged (entry ${name} has no size)`);
    let left = size;
    const body = (async function* () {
      while (left > 0) {
        const chunk = await reader.some(Math.min(left, 1 << 16));
        if (!chunk) throw new BundleError(`the archive ends in the middle of ${name}`);
        left -= chunk.length;
        yield chunk;
      }
    })();
    yield { name, size, body };
    // Whatever the consumer left unread, then the padding to the next block.
    for await (const _ of body) {
    }
    while (left > 0) {
      const chunk = await reader.some(Math.min(left, 1 << 16));
      if (!chunk) throw new BundleError(`the archive ends in the middle of ${name}`);
      left -= chunk.length;
    }
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad && !(await reader.exactly(pad))) throw new BundleError('the archive ends without its end marker');
  }
}

/** The lines of a body, parsed as JSON (NDJSON). */
export async function* ndjson(body: AsyncIterable<Buffer>): AsyncGenerator<Record<string, unknown>> {
  let rest = '';
  const decoder = new StringDecoder('utf8');
  for await (const chunk of body) {
    rest += decoder.write(chunk);
    let at = rest.indexOf('\n');
    while (at >= 0) {
      const line = rest.slice(0, at);
      rest = rest.slice(at + 1);
      if (line) yield JSON.parse(line) as Record<string, unknown>;
      at = rest.indexOf('\n');
    }
  }
  rest += decoder.end();
  if (rest.trim()) yield JSON.parse(rest) as Record<string, unknown>;
}

/** Reads a whole small body (the manifest). */
export async function readAll(body: AsyncIterable<Buffer>, limit = 16 << 20): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    n += chunk.length;
    if (n > limit) throw new BundleError('the bundle manifest is too large');
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}
