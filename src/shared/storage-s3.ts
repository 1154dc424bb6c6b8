import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Config } from '../config.js';
import { AppError } from './errors.js';
import type { FileStorage } from './storage.js';

/** A storage fault as the client sees it: a 503 (with Retry-After), never the SDK's internals. */
function unavailable(err: unknown, timeoutMs: number): AppError {
  const detail = err instanceof Error ? err.name : 'error';
  const what = detail === 'TimeoutError' ? `did not answer within ${timeoutMs} ms` : `is unavailable (${detail})`;
  return new AppError('SERVICE_UNAVAILABLE', { message: `File storage ${what}; retry after the number of seconds in Retry-After.` });
}

const notFound = (err: unknown) =>
  err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.name === 'NotFound' || err.$metadata?.httpStatusCode === 404);

/**
 * Files in an S3-compatible bucket (AWS, Ceph radosgw, MinIO, R2...), with the same rules as local
 * disk: uploads stream to `tmp/<uuid>` (multipart beyond 8 MiB, never buffered whole), promote is a
 * server-side copy then a delete, a missing key reads as null. Checksums are sent only where the
 * API requires them: the SDK's default CRC32 trailers are refused by several S3-compatible stores.
 */
export class S3Storage implements FileStorage {
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly timeoutMs: number;

  constructor(options: NonNullable<Config['s3']>) {
    this.bucket = options.bucket;
    this.timeoutMs = options.timeoutMs;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint ?? undefined,
      forcePathStyle: options.forcePathStyle,
      credentials: options.accessKeyId ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey! } : undefined,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A dead or stalled store fails the request in seconds, not after the SDK's default minutes:
      // each attempt has until requestTimeout for its answer (the handler only warns past it unless
      // told to throw, so a store that takes the body and never answers held a request forever).
      maxAttempts: 2,
      requestHandler: { connectionTimeout: 3_000, requestTimeout: options.timeoutMs, throwOnRequestTimeout: true },
    });
  }

  /** Whether the bucket answers (start-up and /health). */
  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  private async send<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw unavailable(err, this.timeoutMs);
    }
  }

  async upload(body: Readable, inspect?: (chunk: Buffer) => void) {
    const tempKey = `tmp/${randomUUID()}`;
    let bytes = 0;
    let failure: unknown = null;
    // The source's own errors (a client that hangs up, a refused chunk) pass through unchanged.
    const counted = Readable.from(
      (async function* () {
        try {
          for await (const chunk of body as AsyncIterable<Buffer>) {
            bytes += chunk.length;
            inspect?.(chunk);
            yield chunk;
          }
        } catch (err) {
          failure = err;
          throw err;
        }
      })(),
    );
    const upload = new Upload({ client: this.client, params: { Bucket: this.bucket, Key: tempKey, Body: counted }, partSize: 8 * 1024 * 1024, queueSize: 2 });
    try {
      await upload.done();
    } catch (err) {
      if (failure) {
        await this.discard(tempKey).catch(() => {});
        throw failure;
      }
      // The store failed: the request answers now, the clean-up may wait on the store (sweepTemporary removes what it leaves).
      void this.discard(tempKey).catch(() => {});
      throw unavailable(err, this.timeoutMs);
    }
    return { tempKey, bytes };
  }

  async promote(tempKey: string, key: string) {
    await this.send(async () => {
      await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: key, CopySource: `${this.bucket}/${tempKey}` }));
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: tempKey }));
    });
  }

  async discard(tempKey: string) {
    await this.delete(tempKey);
  }

  async read(key: string, range?: { start: number; end: number }) {
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      // With a range the whole size is after the slash of Content-Range.
      const total = range ? Number(out.ContentRange?.split('/')[1]) : Number(out.ContentLength);
      return { stream: out.Body as Readable, bytes: total };
    } catch (err) {
      if (notFound(err)) return null;
      if (err instanceof S3ServiceException && err.name === 'InvalidRange') return null;
      throw unavailable(err, this.timeoutMs);
    }
  }

  async delete(key: string) {
    await this.send(() => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
  }

  async deletePrefix(prefix: string) {
    const base = `${prefix.replace(/\/+$/, '')}/`;
    await this.send(async () => {
      for (;;) {
        const keys = (await this.list(base)).slice(0, 1000);
        if (!keys.length) return;
        // DeleteObjects needs a Content-MD5 or checksum, which the SDK adds (the API requires one).
        await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
        if (keys.length < 1000) return;
      }
    });
  }

  async list(prefix: string): Promise<string[]> {
    return (await this.listWithDates(prefix)).map((o) => o.key);
  }

  private async listWithDates(prefix: string): Promise<Array<{ key: string; modified: number }>> {
    const out: Array<{ key: string; modified: number }> = [];
    let token: string | undefined;
    do {
      const page = await this.send(() => this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token })));
      for (const o of page.Contents ?? []) if (o.Key) out.push({ key: o.Key, modified: o.LastModified?.getTime() ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  async sweepTemporary(olderThanMs: number) {
    let removed = 0;
    for (const o of await this.listWithDates('tmp/')) {
      if (Date.now() - o.modified > olderThanMs) {
        await this.delete(o.key);
        removed++;
      }
    }
    return removed;
  }
}
