import sharp, { type Sharp } from 'sharp';
import { AppError } from '../../shared/errors.js';

/**
 * Images of the media library (decisions M1, M8): every raster image is decoded and written again
 * (EXIF orientation applied, metadata such as GPS location dropped), optionally narrowed to
 * `maxWidth`, at `quality`, or re-encoded as WebP (`optimize`); animated GIF and WebP keep their
 * frames. The four variants are made from it, never wider than it. SVG is kept as sent.
 */
export const VARIANT_WIDTHS = [150, 400, 800, 1200] as const;
export const VARIANT_NAMES = { thumbnail: 150, card: 400, content: 800, medium: 1200 } as const;
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

function encode(pipeline: Sharp, format: 'jpeg' | 'png' | 'webp' | 'gif' | 'avif', quality: number | undefined) {
  switch (format) {
    case 'jpeg':
      return pipeline.jpeg({ quality: quality ?? 85, mozjpeg: true });
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
    const stored = await encode(open().rotate().resize({ width: options.maxWidth, withoutEnlargement: true }), format, options.quality).toBuffer({
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
