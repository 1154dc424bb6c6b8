import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/shared/errors.js';
import { type FileStorage, LocalDiskStorage } from '../../src/shared/storage.js';
import { S3Storage } from '../../src/shared/storage-s3.js';
import { s3Endpoint, testBucket } from '../helpers/s3.js';

const text = async (s: Readable) => {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
};

/** What every store must do (storage.ts's FileStorage), run on local disk and on a real S3 server. */
function storageContract(name: string, open: () => Promise<{ store: FileStorage; close(): Promise<void> }>) {
  describe(`${name} storage contract`, () => {
    let store: FileStorage;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await open());
    });
    afterAll(() => close());

    it('streams an upload to a temporary key, promotes it, reads it whole and in ranges, lists and deletes it', async () => {
      const seen: number[] = [];
      const { tempKey, bytes } = await store.upload(Readable.from([Buffer.from('hello '), Buffer.from('world')]), (c) => seen.push(c.length));
      expect(bytes).toBe(11);
      expect(seen.reduce((a, b) => a + b, 0)).toBe(11);
      expect(tempKey).toMatch(/^tmp\/[0-9a-f-]{36}$/);
      expect(await store.list('tmp/')).toEqual([tempKey]);
      await store.promote(tempKey, 'media/s1/f1/original');
      expect(await store.list('')).toEqual(['media/s1/f1/original']);
      const whole = await store.read('media/s1/f1/original');
      expect(whole!.bytes).toBe(11);
      expect(await text(whole!.stream)).toBe('hello world');
      const part = await store.read('media/s1/f1/original', { start: 6, end: 10 });
      expect(part!.bytes).toBe(11);
      expect(await text(part!.stream)).toBe('world');
      expect(await store.read('media/s1/f1/missing')).toBeNull();
      await store.delete('media/s1/f1/original');
      await store.delete('media/s1/f1/original');
      expect(await store.read('media/s1/f1/original')).toBeNull();
    });

    it('stores a multi-part upload (20 MiB) byte for byte', async () => {
      const chunk = Buffer.alloc(1024 * 1024);
      for (let i = 0; i < chunk.length; i++) chunk[i] = i % 251;
      const { tempKey, bytes } = await store.upload(Readable.from(Array.from({ length: 20 }, () => chunk)));
      expect(bytes).toBe(20 * chunk.length);
      const tail = await store.read(tempKey, { start: bytes - 10, end: bytes - 1 });
      const got: Buffer[] = [];
      for await (const c of tail!.stream) got.push(c as Buffer);
      expect(Buffer.concat(got)).toEqual(chunk.subarray(chunk.length - 10));
      await store.discard(tempKey);
      expect(await store.list('tmp/')).toEqual([]);
    }, 60_000);

    it('leaves nothing when the source fails or the inspector refuses mid-stream, and the error is the source’s', async () => {
      const failing = Readable.from(
        (async function* () {
          yield Buffer.alloc(1000, 1);
          throw new Error('client went away');
        })(),
      );
      await expect(store.upload(failing)).rejects.toThrow('client went away');
      const refused = store.upload(Readable.from([Buffer.alloc(10), Buffer.alloc(10)]), () => {
        throw new Error('refused');
      });
      await expect(refused).rejects.toThrow('refused');
      expect(await store.list('')).toEqual([]);
    });

    it('deletes a prefix (and nothing beside it) and sweeps only old temporary files', async () => {
      for (const key of ['media/s1/a/original', 'media/s1/a/w150', 'media/s1/ab/original', 'media/s2/a/original']) {
        const { tempKey } = await store.upload(Readable.from([Buffer.from(key)]));
        await store.promote(tempKey, key);
      }
      await store.deletePrefix('media/s1/a');
      expect(await store.list('media/')).toEqual(['media/s1/ab/original', 'media/s2/a/original']);
      const { tempKey } = await store.upload(Readable.from([Buffer.from('x')]));
      expect(await store.sweepTemporary(60_000)).toBe(0);
      expect(await store.list('tmp/')).toEqual([tempKey]);
      await new Promise((r) => setTimeout(r, 1100));
      expect(await store.sweepTemporary(500)).toBe(1);
      expect(await store.list('tmp/')).toEqual([]);
      await store.deletePrefix('media/');
    });
  });
}

storageContract('local disk', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-storage-'));
  return { store: new LocalDiskStorage(root), close: async () => fs.rmSync(root, { recursive: true, force: true }) };
});

describe.skipIf(!s3Endpoint())('S3', () => {
  storageContract('S3 (radosgw)', async () => {
    const bucket = await testBucket();
    const store = new S3Storage(bucket.config);
    return { store, close: () => bucket.remove() };
  });

  it('answers a 503 quickly when the store does not answer', async () => {
    const store = new S3Storage({
      endpoint: 'http://127.0.0.1:9',
      bucket: 'none',
      region: 'us-east-1',
      accessKeyId: 'a',
      secretAccessKey: 'b',
      forcePathStyle: true,
      timeoutMs: 10_000,
    });
    const started = Date.now();
    for (const attempt of [() => store.read('media/x'), () => store.upload(Readable.from([Buffer.from('x')])), () => store.delete('media/x')]) {
      const err = await attempt().catch((e) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).statusCode).toBe(503);
    }
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
