import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Config, ConfigError } from '../config.js';

/**
 * Where files live, behind one interface (architecture "Files"): local disk under
 * `$CAIRN_DATA_DIR/files` by default, or an S3-compatible bucket (storage-s3.ts). Keys are made by the
 * service (`private/forms/<site>/<form>/<uuid>`), never from a client's file name.
 *
 * A file and its row are never out of step: an upload is written under a temporary key first
 * (`upload`) and promoted to its key (`promote`) around the commit of its row (media promote
 * first and record what to undo, media.service.ts storeUpload); a failed request discards the
 * temporary file, and `sweepTemporary` removes what a crash left behind.
 */
export interface FileStorage {
  /** Streams `body` to a new temporary key; `inspect` sees each chunk and may throw to stop it. */
  upload(body: Readable, inspect?: (chunk: Buffer) => void): Promise<{ tempKey: string; bytes: number }>;
  promote(tempKey: string, key: string): Promise<void>;
  discard(tempKey: string): Promise<void>;
  /** The bytes of a key (a `range` of them: first and last byte, inclusive), with the whole file's size; null when missing. */
  read(key: string, range?: { start: number; end: number }): Promise<{ stream: Readable; bytes: number } | null>;
  delete(key: string): Promise<void>;
  /** Deletes every file under a key prefix (a form's files with the form). */
  deletePrefix(prefix: string): Promise<void>;
  /** Deletes temporary files older than `olderThanMs`; returns how many. */
  sweepTemporary(olderThanMs: number): Promise<number>;
  /** Every key under a prefix (`''`: all), sorted; for housekeeping and tests. */
  list(prefix: string): Promise<string[]>;
}

/**
 * The configured store: the S3 bucket when S3_BUCKET is set (the SDK is loaded only then), else
 * local disk. A bucket that does not exist or refuses the credentials stops the start with the
 * reason; a store that does not answer yet is logged, and file requests answer 503 until it does.
 */
export async function openStorage(config: Config, log: { warn(o: object, msg: string): void }): Promise<FileStorage> {
  if (!config.s3) return new LocalDiskStorage(path.join(config.dataDir, 'files'));
  const { S3Storage } = await import('./storage-s3.js');
  const store = new S3Storage(config.s3);
  try {
    await store.check();
  } catch (err) {
    const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status === 404) throw new ConfigError(`S3_BUCKET "${config.s3.bucket}" does not exist at ${config.s3.endpoint ?? 'AWS'}`);
    if (status === 403 || status === 401) throw new ConfigError(`S3 refused the credentials for bucket "${config.s3.bucket}" (HTTP ${status})`);
    log.warn({ err: { message: (err as Error).message } }, 'S3 storage unreachable at start-up; file requests answer 503 until it answers');
  }
  return store;
}

/** Where a media file's original and variants are kept (`media/<site>/<file id>/...`). */
export const mediaPrefix = (siteId: string, mediaId: string) => `media/${siteId}/${mediaId}`;

const SAFE_KEY = /^[a-z0-9][a-z0-9/_-]*$/i;

export class LocalDiskStorage implements FileStorage {
  private readonly tmpDir: string;

  constructor(private readonly root: string) {
    this.tmpDir = path.join(root, 'tmp');
  }

  /** A key's file, refusing anything that could leave the root. */
  private file(key: string): string {
    if (!SAFE_KEY.test(key) || key.split('/').some((s) => s === '' || s === '.' || s === '..')) throw new Error(`invalid storage key: ${key}`);
    return path.join(this.root, key);
  }

  async upload(body: Readable, inspect?: (chunk: Buffer) => void) {
    await fs.mkdir(this.tmpDir, { recursive: true });
    const tempKey = `tmp/${randomUUID()}`;
    const target = this.file(tempKey);
    let bytes = 0;
    const file = createWriteStream(target, { flags: 'wx' });
    try {
      await pipeline(
        body,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            bytes += chunk.length;
            inspect?.(chunk);
            yield chunk;
          }
        },
        file,
      );
    } catch (err) {
      // A source that failed at once fails the pipeline before the file is even opened: removed
      // before then, it would be created afterwards and left behind.
      if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()));
      await fs.rm(target, { force: true });
      throw err;
    }
    return { tempKey, bytes };
  }

  async promote(tempKey: string, key: string) {
    const target = this.file(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.rename(this.file(tempKey), target);
  }

  async discard(tempKey: string) {
    await fs.rm(this.file(tempKey), { force: true });
  }

  async read(key: string, range?: { start: number; end: number }) {
    const file = this.file(key);
    try {
      const stat = await fs.stat(file);
      return { stream: createReadStream(file, range), bytes: stat.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string) {
    await fs.rm(this.file(key), { force: true });
  }

  async deletePrefix(prefix: string) {
    try {
      await fs.rm(this.file(prefix.replace(/\/+$/, '')), { recursive: true, force: true });
    } catch (err) {
      // A file where a directory of the prefix would be: nothing is stored under it.
      if ((err as NodeJS.ErrnoException).code !== 'ENOTDIR') throw err;
    }
  }

  async list(prefix: string) {
    const names = (await fs.readdir(this.root, { recursive: true }).catch(() => [] as string[])) as string[];
    const keys: string[] = [];
    for (const name of names) {
      const key = name.split(path.sep).join('/');
      if (key.startsWith(prefix) && (await fs.stat(path.join(this.root, name)).catch(() => null))?.isFile()) keys.push(key);
    }
    return keys.sort();
  }

  async sweepTemporary(olderThanMs: number) {
    let removed = 0;
    const names = await fs.readdir(this.tmpDir).catch(() => [] as string[]);
    for (const name of names) {
      const file = path.join(this.tmpDir, name);
      const stat = await fs.stat(file).catch(() => null);
      if (stat && Date.now() - stat.mtimeMs > olderThanMs) {
        await fs.rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }
}

/** The media type of a file from its first bytes (never from its name or the client's header); null when unknown. */
export function sniffType(head: Buffer): string | null {
  const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (head.subarray(0, 6).toString('latin1') === 'GIF87a' || head.subarray(0, 6).toString('latin1') === 'GIF89a') return 'image/gif';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf';
  const ftyp = head.subarray(4, 8).toString('latin1') === 'ftyp' ? head.subarray(8, 12).toString('latin1') : null;
  if (ftyp === 'avif' || ftyp === 'avis') return 'image/avif';
  if (ftyp && /^(isom|iso2|mp41|mp42|M4V |avc1|dash)$/.test(ftyp)) return 'video/mp4';
  if (ftyp === 'qt  ') return 'video/quicktime';
  if (starts(0x1a, 0x45, 0xdf, 0xa3)) return 'video/webm';
  if (head.subarray(0, 4).toString('latin1') === 'OggS') return 'audio/ogg';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WAVE') return 'audio/wav';
  if (head.subarray(0, 3).toString('latin1') === 'ID3' || (head[0] === 0xff && (head[1]! & 0xe0) === 0xe0)) return 'audio/mpeg';
  if (starts(0x50, 0x4b, 0x03, 0x04)) return 'application/zip';
  // Text: valid UTF-8 with no NUL or other C0 control but tab, line feed, carriage return and form feed.
  if (head.length && !head.some((b) => b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c)) {
    const text = new TextDecoder('utf-8', { fatal: false }).decode(head.subarray(0, Math.max(0, head.length - 3)));
    if (!text.includes('\uFFFD'))
      return /^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(text) ? 'image/svg+xml' : 'text/plain';
  }
  return null;
}
