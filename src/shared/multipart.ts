import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError } from './errors.js';

/**
 * Multipart bodies as a client sees them (issue 36 item 5): a body that is not multipart is the 415
 * of decisions P11, and a body the parser cannot read (no boundary, a cut final boundary, random
 * bytes) is a 400 saying why, never a 500 and never an error-level log line a visitor could
 * produce at will. Every route that reads multipart reads it through `multipartParts`.
 */
type PartsOptions = Parameters<FastifyRequest['parts']>[0];

/** The parser's own errors (busboy's plain `Error`s), seen on the parts or on a file part's stream. */
const malformedErrors = new WeakSet<object>();

/** Whether an error is a malformed multipart body (errors.ts answers it as a 400). */
export const isMalformedMultipart = (err: unknown): boolean => typeof err === 'object' && err !== null && malformedErrors.has(err);

/** A parser error without a status of its own (the plugin's limit errors carry 413, a client gone 400) is the body's fault. */
function markMalformed(err: unknown): unknown {
  if (err instanceof Error && !(err instanceof AppError) && typeof (err as { statusCode?: unknown }).statusCode !== 'number') malformedErrors.add(err);
  return err;
}

export const malformedMessage = (err: Error) => `The multipart body cannot be read: ${err.message.replace(/^Multipart: /, '')}.`;

/** The error answers of a route that reads multipart (OpenAPI), `415` only where JSON is not taken instead. */
export const MULTIPART_ERRORS = {
  400: { $ref: 'Error#', description: '`BAD_REQUEST`: the multipart body cannot be read (no boundary, cut short, not multipart data)' },
} as const;
export const MULTIPART_ONLY_ERRORS = {
  ...MULTIPART_ERRORS,
  415: { $ref: 'Error#', description: '`UNSUPPORTED_MEDIA_TYPE`: the body is not multipart/form-data' },
} as const;

/** The parts of a multipart request, read as they arrive (`req.parts`), with its faults made client errors. */
export async function* multipartParts(req: FastifyRequest, options: PartsOptions): AsyncGenerator<Multipart> {
  if (!req.isMultipart()) throw new AppError('UNSUPPORTED_MEDIA_TYPE', { message: 'This endpoint takes a multipart/form-data body.' });
  let source: AsyncIterator<Multipart>;
  try {
    // Throws at once when the content type names no boundary.
    source = req.parts(options)[Symbol.asyncIterator]();
  } catch (err) {
    throw markMalformed(err);
  }
  try {
    for (;;) {
      let next: IteratorResult<Multipart>;
      try {
        next = await source.next();
      } catch (err) {
        throw markMalformed(err);
      }
      if (next.done) return;
      // A body cut inside a file fails the file's stream, where the consumer reads it (it may have failed already).
      if (next.value.type === 'file') {
        next.value.file.once('error', markMalformed);
        if (next.value.file.errored) markMalformed(next.value.file.errored);
      }
      yield next.value;
    }
  } finally {
    await source.return?.();
  }
}
