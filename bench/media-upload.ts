import sharp from 'sharp';
import { processCpuMeter } from './cpu.js';
import type { BenchContext } from './endpoints.js';

/** Uploads of one photo through the API, one at a time (issue 10: the time to upload a 5 MB JPEG and get its variants). */
export interface UploadRow {
  file: string;
  runs: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  /** The server's CPU time per upload (decode, orientation, re-encode, four variants, storage). */
  serverCpuMsPerUpload: number | null;
}

/** A ~5 MB 3000x2000 JPEG with detail in every block (noise), as a phone's photo is. */
async function photo(): Promise<Buffer> {
  const [width, height] = [3000, 2000];
  const noise = Buffer.alloc(width * height * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = ((i * 2654435761) >>> 24) ^ (i >> 12);
  return sharp(noise, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 95 })
    .toBuffer();
}

/**
 * `runs` uploads of the same photo to POST /v1/media/upload, each answered (201) with its four
 * variants stored before the next starts: what an editor waits for. The first two warm up.
 */
export async function measureUploads(serverUrl: string, ctx: BenchContext, serverPid: number, runs = 22): Promise<UploadRow> {
  const jpeg = await photo();
  const boundary = '----cairnbench';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="photo.jpg"\r\ncontent-type: image/jpeg\r\n\r\n`),
    jpeg,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const times: number[] = [];
  let cpu: (() => number | null) | null = null;
  for (let i = 0; i < runs; i++) {
    if (i === 2) cpu = processCpuMeter(serverPid);
    const started = performance.now();
    const res = await fetch(`${serverUrl}/v1/media/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    const answer = (await res.json()) as { data?: { variants?: unknown } };
    if (res.status !== 201 || !answer.data?.variants) throw new Error(`upload answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    if (i >= 2) times.push(performance.now() - started);
  }
  const cpuMs = cpu?.() ?? null;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)]!;
  return {
    file: `${(jpeg.length / 1048576).toFixed(1)} MB 3000x2000 JPEG`,
    runs: times.length,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    meanMs: times.reduce((a, b) => a + b, 0) / times.length,
    serverCpuMsPerUpload: cpuMs === null ? null : cpuMs / times.length,
  };
}

export function formatUploads(row: UploadRow): string {
  const cpu = row.serverCpuMsPerUpload === null ? 'n/a' : `${row.serverCpuMsPerUpload.toFixed(0)} ms`;
  return [
    'media upload (POST /v1/media/upload, one at a time, answered with its four variants stored):',
    `  ${row.file}: p50 ${row.p50Ms.toFixed(0)} ms, p99 ${row.p99Ms.toFixed(0)} ms, mean ${row.meanMs.toFixed(0)} ms over ${row.runs} uploads; server CPU ${cpu} per upload`,
  ].join('\n');
}
