import type { Readable } from 'node:stream';
import { type TObject, Type } from 'typebox';
import { parse } from 'csv-parse';
import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { validationFieldErrors } from '../plugins/errors.js';
import { compileSchema } from '../plugins/validation.js';
import { AppError, invalid } from '../shared/errors.js';
import { multipartParts } from '../shared/multipart.js';
import { named, ref } from '../shared/schemas.js';
import { timeSlicer } from '../shared/time-slice.js';

/**
 * Imports of a resource's rows (redirects, sitemap entries, ...; decisions R7): a JSON body
 * `{ entries: [...] }` or a CSV file in the multipart field `file`, read as a stream. Each row is
 * checked against the resource's create body on its own and numbered from 1 (after the CSV
 * header), so a bad row is reported by number and never stops the others.
 */
export type ImportRow<T> = { row: number; input: T } | { row: number; error: { field?: string; message: string } };

/** What every import answers: `{ imported, skipped, errors, errorCount }`. */
export const ImportResultRef = ref(
  named(
    'ImportResult',
    Type.Object({
      imported: Type.Integer(),
      skipped: Type.Integer({ description: 'Rows the resource (or an earlier row) already has, by its unique field' }),
      errors: Type.Array(Type.Object({ row: Type.Integer(), field: Type.Optional(Type.String()), message: Type.String() }), {
        description: 'Rows left out, by row number (from 1, after the CSV header); at most 1,000 listed',
      }),
      errorCount: Type.Integer({ description: 'Every row left out, also past the listed ones' }),
    }),
  ),
);

/** The JSON body of an import route: `{ entries: [...] }`, 1 to `maxRows` rows checked one by one (a CSV file comes as multipart instead). */
export function importBody(maxRows: number, entry: string) {
  return {
    content: { 'application/json': { schema: Type.Object({ entries: Type.Array(Type.Unknown({ description: entry }), { minItems: 1, maxItems: maxRows }) }) } },
  };
}

export interface ImportFormat {
  /** The create body each row must satisfy (unknown fields are dropped). */
  schema: TObject;
  /** CSV header name (lower case, `_` and spaces ignored) -> field; the API's own names are accepted too. */
  columns: Record<string, string>;
  /** Fields a CSV row must have a column for. */
  required: readonly string[];
  maxRows: number;
  /** Largest CSV file, bytes. */
  maxFileBytes: number;
}

const BOOLEAN_TEXT: Record<string, boolean> = { true: true, false: false, '1': true, '0': false, yes: true, no: false };
const headerKey = (h: string) => h.trim().toLowerCase().replace(/[_\s]/g, '');

export function importReader<T>(format: ImportFormat) {
  // Compiled on the first import, not when the module loads: each Ajv compile costs tens of
  // milliseconds of every start (issue 37 item 5, decisions PF18).
  const validators: Partial<Record<'json' | 'text', ReturnType<typeof compileSchema>>> = {};
  const validatorOf = (input: 'json' | 'text') => (validators[input] ??= compileSchema(format.schema, input));
  const booleans = new Set(Object.entries(format.schema.properties).flatMap(([k, p]) => ((p as { type?: unknown }).type === 'boolean' ? [k] : [])));
  const columns = new Map<string, string>();
  for (const field of Object.keys(format.schema.properties)) columns.set(headerKey(field), field);
  for (const [header, field] of Object.entries(format.columns)) columns.set(headerKey(header), field);

  function check(row: number, value: Record<string, unknown>, validate: ReturnType<typeof compileSchema>): ImportRow<T> {
    if (validate(value)) return { row, input: value as T };
    const errors = validationFieldErrors((validate.errors ?? []) as never);
    const [field, messages] = Object.entries(errors)[0] ?? ['body', ['is invalid']];
    return { row, error: { field, message: `${field} ${messages![0]}` } };
  }

  /** `{ entries: [...] }`: each entry checked on its own. */
  function fromJson(entries: unknown[]): ImportRow<T>[] {
    return entries.map((e, i) =>
      e && typeof e === 'object' && !Array.isArray(e)
        ? check(i + 1, { ...(e as object) }, validatorOf('json'))
        : { row: i + 1, error: { message: 'must be an object' } },
    );
  }

  /** A CSV file (RFC 4180, UTF-8, optional BOM, header row required); empty cells are left out (defaults apply). */
  async function fromCsv(stream: Readable): Promise<ImportRow<T>[]> {
    const parser = parse({ bom: true, relax_column_count: true, skip_empty_lines: true, trim: false, max_record_size: 65_536 });
    // pipe() passes no error on: a body cut mid-file (its stream failed, maybe already) would leave the parser waiting forever.
    if (stream.errored) parser.destroy(stream.errored);
    else stream.once('error', (err) => parser.destroy(err)).pipe(parser);
    const out: ImportRow<T>[] = [];
    let header: Array<string | null> | null = null;
    // The parser turns a whole chunk of the file into records at once, and the loop takes them
    // as promise continuations, which give the event loop no turn: a turn once a slice of work is
    // used up (decisions HN6, HN10).
    const slice = timeSlicer();
    try {
      for await (const record of parser as AsyncIterable<string[]>) {
        const wait = slice();
        if (wait) await wait;
        if (!header) {
          header = record.map((h) => columns.get(headerKey(h)) ?? null);
          const missing = format.required.filter((f) => !header!.includes(f));
          if (missing.length) throw invalid('IMPORT_FILE_INVALID', 'file', `The CSV needs a header row naming ${missing.join(' and ')}.`);
          continue;
        }
        if (out.length >= format.maxRows) throw invalid('VALIDATION_FAILED', 'file', `An import holds at most ${format.maxRows} rows; split the file.`);
        const value: Record<string, unknown> = {};
        header.forEach((name, i) => {
          const cell = record[i];
          if (!name || cell === undefined || cell === '') return;
          value[name] = booleans.has(name) ? (BOOLEAN_TEXT[cell.trim().toLowerCase()] ?? cell) : cell;
        });
        out.push(check(out.length + 1, value, validatorOf('text')));
      }
    } catch (err) {
      if ((err as { code?: string }).code?.startsWith('CSV_'))
        throw invalid('IMPORT_FILE_INVALID', 'file', `The CSV cannot be read: ${(err as Error).message}`);
      throw err;
    } finally {
      stream.resume();
    }
    if (!header) throw invalid('IMPORT_FILE_INVALID', 'file', 'The CSV file is empty.');
    return out;
  }

  /** The rows of an import request, from its JSON body or its multipart file. */
  async function fromRequest(req: FastifyRequest): Promise<ImportRow<T>[]> {
    if (!req.isMultipart()) return fromJson((req.body as { entries: unknown[] }).entries);
    let part: Extract<Multipart, { type: 'file' }> | null = null;
    for await (const p of multipartParts(req, { limits: { fileSize: format.maxFileBytes, files: 1 } })) {
      if (p.type !== 'file') continue;
      part = p;
      break;
    }
    if (!part) throw new AppError('VALIDATION_FAILED', { message: 'The multipart body has no file.', errors: { file: ['is required'] } });
    const rows = await fromCsv(part.file);
    if (part.file.truncated) throw new AppError('PAYLOAD_TOO_LARGE', { message: `The CSV file is larger than ${format.maxFileBytes} bytes.` });
    return rows;
  }

  return { fromJson, fromCsv, fromRequest };
}
