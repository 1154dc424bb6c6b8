import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { parseJson } from '../../db/json.js';
import type { FieldIssue } from '../../shared/field-schema/index.js';
import { multipartParts } from '../../shared/multipart.js';
import { type FileStorage, sniffType } from '../../shared/storage.js';
import type { FormField } from './forms.fields.js';

/**
 * Files sent with a form (decisions F11): multipart bodies read as a stream, each file written to
 * a temporary key while it arrives (never held in memory), its type taken from its first bytes,
 * its size and type checked against the field; the caller promotes the files once the submission
 * is committed, or discards them.
 */
export const DEFAULT_ACCEPT = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain'];
export const DEFAULT_MAX_MB = 5;
export const MAX_MB = 10;
const HEAD_BYTES = 512;

export interface UploadedFile {
  fileId: string;
  tempKey: string;
  fileName: string;
  size: number;
  type: string;
}

/** The reference a submission stores for a file. */
export type FileRef = Omit<UploadedFile, 'tempKey'>;

export const fileKey = (siteId: string, formId: number, fileId: string) => `private/forms/${siteId}/${formId}/${fileId}`;
/** The files a submission's data references (the values of its `file` fields). */
export function fileRefsOf(data: unknown): FileRef[] {
  return Object.values(parseJson<Record<string, unknown>>(data, {})).filter(
    (v): v is FileRef => v !== null && typeof v === 'object' && typeof (v as FileRef).fileId === 'string',
  );
}

export const formFilesPrefix = (siteId: string, formId: number) => `private/forms/${siteId}/${formId}`;

/** A client's file name kept for display and download only: no path, no control characters, at most 255 characters. */
function cleanName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = base.replace(/[\u0000-\u001f\u007f"]/g, '').trim();
  return (clean || 'file').slice(0, 255);
}

const accepts = (accept: readonly string[], type: string) => accept.some((a) => a === type || (a.endsWith('/*') && type.startsWith(a.slice(0, -1))));

/**
 * Reads a multipart submission: text parts as values (repeated names as lists), file parts of
 * the form's `file` fields to temporary storage. Files of other names are read and dropped. On
 * any problem the files read so far are discarded by the caller (`discardAll`).
 */
export async function readMultipart(req: FastifyRequest, fields: readonly FormField[], storage: FileStorage) {
  const fileFields = new Map(fields.filter((f) => f.type === 'file').map((f) => [f.name, f]));
  const values: Record<string, unknown> = {};
  const files = new Map<string, UploadedFile>();
  const issues: FieldIssue[] = [];
  // A few parts beyond the form's file fields are read and dropped (a page may send more than the form has).
  const parts = multipartParts(req, { limits: { files: fileFields.size + 5, fileSize: MAX_MB * 1024 * 1024, fields: 200, fieldSize: 100_000, parts: 250 } });
  try {
    for await (const part of parts) {
      const name = part.fieldname;
      if (part.type === 'field') {
        if (name === '__proto__' || typeof part.value !== 'string') continue;
        const had = values[name];
        values[name] = had === undefined ? part.value : Array.isArray(had) ? [...had, part.value] : [had, part.value];
        continue;
      }
      const field = fileFields.get(name);
      // A browser sends an empty part for a file input left empty.
      if (!field || files.has(name) || !part.filename) {
        for await (const _ of part.file) {
          // read and dropped
        }
        continue;
      }
      const limitMb = Math.min(field.validation?.maxSizeMb ?? DEFAULT_MAX_MB, MAX_MB);
      const limit = limitMb * 1024 * 1024;
      let head = Buffer.alloc(0);
      let size = 0;
      // Read to the end whatever happens (the next parts follow in the same stream); write only what fits.
      const body = Readable.from(
        (async function* () {
          for await (const chunk of part.file as AsyncIterable<Buffer>) {
            size += chunk.length;
            if (head.length < HEAD_BYTES) head = Buffer.concat([head, chunk.subarray(0, HEAD_BYTES - head.length)]);
            if (size <= limit) yield chunk;
          }
        })(),
      );
      const { tempKey } = await storage.upload(body);
      const type = sniffType(head);
      const path = `data.${name}`;
      if (size > limit || part.file.truncated) issues.push({ path, message: `must be at most ${limitMb} MB` });
      else if (size === 0) issues.push({ path, message: 'is an empty file' });
      else if (!type || !accepts(field.validation?.accept ?? DEFAULT_ACCEPT, type)) {
        issues.push({
          path,
          message: `must be a file of type ${(field.validation?.accept ?? DEFAULT_ACCEPT).join(', ')}${type ? ` (this one is ${type})` : ''}`,
        });
      }
      files.set(name, { fileId: randomUUID(), tempKey, fileName: cleanName(part.filename), size, type: type ?? 'application/octet-stream' });
    }
  } catch (err) {
    await discardAll(storage, files.values());
    throw err;
  }
  return { values, files, issues };
}

export async function discardAll(storage: FileStorage, files: Iterable<UploadedFile>): Promise<void> {
  await Promise.all([...files].map((f) => storage.discard(f.tempKey)));
}
