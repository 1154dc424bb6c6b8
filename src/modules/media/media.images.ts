import { createRequire } from 'node:module';
import type SharpModule from 'sharp';
import type { Sharp } from 'sharp';

// sharp (libvips) is loaded with the first image, not at start: about 27 MB of a process that may never see one.
const require = createRequire(import.meta.url);
let loadedSharp: typeof SharpModule | null = null;
const sharp: typeof SharpModule = ((...args: Parameters<typeof SharpModule>) => {
  loadedSharp ??= require('sharp') as typeof SharpModule;
  return loadedSharp(...args);
}) as typeof SharpModule;
import { AppError } from '../../shared/errors.js';

/**
 * Images of the media library (decisions M1, M8): every raster image is decoded and written again
 * (EXIF orientation applied, metadata such as GPS location dropped), optionally narrowed to
 * `maxWidth`, at `quality`, or re-encoded as WebP (`optimize`); animated GIF and WebP keep their
 * frames. The four variants are made from it, never wider than it. SVG is kept as sent.
 */
export const VARIANT_WIDTHS = [150, 400, 800, 1200] as const;
export const VARIANT_NAMES = { thumbnail: 150, card: 400, content: 800, medium: 1200 } as const;
/** The largest height a crop may ask for (`?h=`). */
export const MAX_HEIGHT = 2400;
/** Decoding a picture larger than this many pixels is refused (a decompression bomb). */
export const MAX_INPUT_PIXELS = 50_000_000;

const RASTER: Record<string, 'jpeg' | 'png' | 'webp' | 'gif' | 'avif'> = {
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/avif': 'avif',
};

export const isRaster = (type: string) => type in RASTER;

export interface ImageOptions {
  maxWidth?: number;
  quality?: number;
  optimize?: boolean;
}

export interface ProcessedImage {
  body: Buffer;
  type: string;
  width: number;
  height: number;
  variants: Array<{ width: number; body: Buffer }>;
}

/**
 * `compact`: mozjpeg for JPEG, 10-15% smaller and about 8x slower (2.6 s instead of 0.33 s for a
 * 6-megapixel photo on the bench machine): worth it for the variants, which are small and served
 * most, not for the stored original (bench "media upload": 3.3 s to 1.0 s an upload).
 */
function encode(pipeline: Sharp, format: 'jpeg' | 'png' | 'webp' | 'gif' | 'avif', quality: number | undefined, compact = true) {
  switch (format) {
    case 'jpeg':
      return pipeline.jpeg({ quality: quality ?? 85, mozjpeg: compact, optimiseCoding: true });
    case 'png':
      return pipeline.png({ compressionLevel: 9 });
    case 'webp':
      return pipeline.webp({ quality: quality ?? 82 });
    case 'gif':
      return pipeline.gif();
    case 'avif':
      return pipeline.avif({ quality: quality ?? 60 });
  }
}

/** The stored image and its variants from the uploaded bytes (422 `IMAGE_INVALID` when they cannot be decoded). */
export async function processImage(input: Buffer, type: string, options: ImageOptions): Promise<ProcessedImage> {
  const source = RASTER[type]!;
  const format = options.optimize ? 'webp' : source;
  const open = () => sharp(input, { animated: true, limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' });
  try {
    const meta = await open().metadata();
    if (!meta.width || !meta.height) throw new Error('no dimensions');
    const stored = await encode(open().rotate().resize({ width: options.maxWidth, withoutEnlargement: true }), format, options.quality, false).toBuffer({
      resolveWithObject: true,
    });
    const width = stored.info.width;
    // An animation's height in the info is its frames' total; one frame's is its page height.
    const height = stored.info.pageHeight ?? stored.info.height;
    const variants: ProcessedImage['variants'] = [];
    for (const w of VARIANT_WIDTHS) {
      if (w >= width) break;
      const body = await encode(sharp(stored.data, { animated: true }).resize({ width: w }), format, options.quality).toBuffer();
      variants.push({ width: w, body });
    }
    return { body: stored.data, type: `image/${format}`, width, height, variants };
  } catch (err) {
    const message = (err as Error).message ?? '';
    if (/pixel limit/i.test(message)) {
      throw new AppError('IMAGE_TOO_LARGE', { message: `The image has more than ${MAX_INPUT_PIXELS} pixels.`, errors: { file: ['has too many pixels'] } });
    }
    throw new AppError('IMAGE_INVALID', { message: 'The image cannot be read.', errors: { file: [message.slice(0, 200) || 'cannot be decoded'] } });
  }
}

/** A size asked of a stored image at its URL (`?w=&h=&fit=`), in the format the reader accepts. */
export interface DerivativeSpec {
  width: number;
  /** With a height: `cover` fills w×h, cropping around the focal point; `contain` fits inside it. */
  height: number | null;
  fit: 'cover' | 'contain';
  focalX: number;
  focalY: number;
  format: 'jpeg' | 'png' | 'webp' | 'gif' | 'avif';
}

/** The formats served in place of the stored one when the reader's `Accept` names them, best first. */
const NEGOTIATED = ['avif', 'webp'] as const;

/**
 * The format to send for `accept`: AVIF or WebP when the reader takes it (q > 0) and the stored
 * image is a still one of another format; else the stored format. GIFs keep theirs (their frames).
 */
export function negotiatedFormat(storedType: string, accept: string | undefined): DerivativeSpec['format'] {
  const stored = RASTER[storedType]!;
  if (!accept || stored === 'gif') return stored;
  const taken = new Set(
    accept
      .toLowerCase()
      .split(',')
      .map((part) => part.trim().split(';'))
      .filter(([, ...params]) => !params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p)))
      .map(([type]) => type!.trim()),
  );
  for (const f of NEGOTIATED) {
    if (f === stored) return stored;
    if (taken.has(`image/${f}`)) return f;
  }
  return stored;
}

/**
 * A derivative of a stored image: `cover` scales it to cover w×h and cuts w×h around the focal
 * point (0-1 from the left and top), `contain` scales it to fit inside (aspect kept, no padding).
 * Never upscaled: a box larger than the image shrinks to it, keeping its shape. GIFs give their
 * first frame when cropped; AVIF at a low effort (it is made once, then kept in storage).
 */
export async function renderDerivative(source: Buffer, spec: DerivativeSpec): Promise<Buffer> {
  const animated = spec.format === 'gif' && spec.height === null;
  const open = () => sharp(source, { animated, limitInputPixels: MAX_INPUT_PIXELS });
  let pipeline: Sharp;
  if (spec.height === null || spec.fit === 'contain') {
    pipeline = open().resize({ width: spec.width, height: spec.height ?? undefined, fit: 'inside', withoutEnlargement: true });
  } else {
    const meta = await open().metadata();
    const W = meta.width!;
    const H = meta.pageHeight ?? meta.height!;
    let [w, h] = [spec.width, spec.height];
    let scale = Math.max(w / W, h / H);
    if (scale > 1) {
      [w, h] = [Math.max(1, Math.floor(w / scale)), Math.max(1, Math.floor(h / scale))];
      scale = 1;
    }
    const rw = Math.max(w, Math.round(W * scale));
    const rh = Math.max(h, Math.round(H * scale));
    const left = Math.min(rw - w, Math.max(0, Math.round(spec.focalX * rw - w / 2)));
    const top = Math.min(rh - h, Math.max(0, Math.round(spec.focalY * rh - h / 2)));
    pipeline = open().resize({ width: rw, height: rh, fit: 'fill' }).extract({ left, top, width: w, height: h });
  }
  if (spec.format === 'avif') return pipeline.avif({ quality: 55, effort: 2 }).toBuffer();
  return encode(pipeline, spec.format, undefined).toBuffer();
}
