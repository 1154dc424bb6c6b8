/**
 * A photo for the media delivery row of `npm run bench` (issue 10): a 2,000 x 1,333 JPEG with
 * detail (noise), stored through the service's own upload path (decoded, written again, four
 * variants) into `$CAIRN_DATA_DIR/files`, where the server and the bare static server read it.
 */
import path from 'node:path';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import type { Db } from '../src/db/types.js';
import { storeUpload } from '../src/modules/media/media.service.js';
import { LocalDiskStorage } from '../src/shared/storage.js';
import type { BenchContext } from './endpoints.js';

export async function seedMedia(db: Db, siteId: string, _userId: string, ctx: Readonly<BenchContext>): Promise<Record<string, unknown>> {
  const noise = Buffer.alloc(2000 * 1333 * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  const jpeg = await sharp(noise, { raw: { width: 2000, height: 1333, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
  const storage = new LocalDiskStorage(path.join(String(ctx.dataDir), 'files'));
  const temps: string[] = [];
  const started = performance.now();
  const { tempKey, bytes } = await storage.upload(Readable.from([jpeg]));
  temps.push(tempKey);
  const media = await storeUpload(db, storage, siteId, { tempKey, size: bytes, head: jpeg.subarray(0, 512), name: 'Harbour at dusk.jpg' }, {}, '', temps);
  const ms = performance.now() - started;
  await Promise.all(temps.map((t) => storage.discard(t)));
  return {
    mediaPath: `${new URL(media.url, 'http://x').pathname}?w=400`,
    summary: `a ${(jpeg.length / 1048576).toFixed(1)} MB 2000x1333 JPEG stored with its variants in ${ms.toFixed(0)} ms`,
  };
}
