import { Type, type Static, type TObject, type TOptional, type TProperties, type TSchema, type TUnsafe } from 'typebox';
import type { ErrorCode } from '../shared/errors.js';

/**
 * One field of a resource, declared once: its API name (the key in the map), its column, its
 * response schema, whether and how it is written, and in which shapes it appears. The response
 * schema, the create and update bodies, the row to insert, the patch and the API object are all
 * produced from the map, so a new field touches one place.
 */
export interface Field<S extends TSchema = TSchema> {
  /** The column; absent for a value derived from several columns (`from`) or computed per page (`computed`). */
  column?: string;
  /** A value derived from the row's `columns` (e.g. `meta` from meta_title and meta_description). */
  from?: (row: Record<string, any>) => unknown;
  columns?: readonly string[];
  /** The response schema. */
  schema: S;
  /** The request schema; absent for read-only fields. */
  input?: TSchema;
  /** The request schema on update, when it differs from create's (another description, no default). */
  updateInput?: TSchema;
  /** On create: required, optional (the default for writable fields) or not accepted. */
  create?: 'required' | 'optional' | false;
  /** Accepted on update (default: yes for writable fields). */
  update?: boolean;
  /** Accepted on update only when equal to the stored value; otherwise this 422 code. */
  immutable?: ErrorCode;
  /** Stored on create when the field is omitted (default null). */
  insertDefault?: unknown;
  /** Column value -> API value (default: as stored). */
  read?: (value: any) => unknown;
  /** API value -> column value (default: as sent). */
  write?: (value: any) => unknown;
  /** In the list shape (default true). */
  summary?: boolean;
  /** Compared for translation completeness (decisions G10). */
  translated?: boolean;
}

export type Fields = Record<string, Field>;
type Row = Record<string, unknown>;

/** The API object's type from a field map. */
export type ApiOf<F extends Fields> = { [K in keyof F]: Static<F[K]['schema']> };

/** The create body's properties: writable fields not excluded from create, required or optional. */
export type CreateProps<F extends Fields> = {
  [K in keyof F as F[K] extends { input: TSchema } ? (F[K] extends { create: false } ? never : K) : never]: F[K] extends {
    create: 'required';
    input: infer S extends TSchema;
  }
    ? S
    : F[K] extends { input: infer S extends TSchema }
      ? TOptional<S>
      : never;
};

/** The update body's properties: writable fields not excluded from update, all optional. */
export type UpdateProps<F extends Fields> = {
  [K in keyof F as F[K] extends { input: TSchema } ? (F[K] extends { update: false } ? never : K) : never]: F[K] extends { input: infer S extends TSchema }
    ? TOptional<S>
    : never;
};

const toNumber = (v: unknown) => (v === null || v === undefined ? v : Number(v));

/** The fields every resource shares. */
export const common = {
  id: { column: 'id', schema: Type.Integer(), read: Number } satisfies Field,
  createdAt: { column: 'created_at', schema: Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' }) } satisfies Field,
  updatedAt: { column: 'updated_at', schema: Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' }) } satisfies Field,
  /** Set from the `locale` of the create body (resolved against the site's locales); never changed after. */
  locale: { column: 'locale', schema: Type.String() } satisfies Field,
  /** Set from the `translationGroup` of the create body, or a new group. */
  translationGroup: { column: 'translation_group', schema: Type.String({ format: 'uuid' }) } satisfies Field,
};

/** An integer column that may be null (PostgreSQL returns bigints as strings in some drivers). */
export const nullableNumber = toNumber;

function fieldValue(f: Field, name: string, row: Row, computed: Row): unknown {
  if (f.from) return f.from(row);
  if (!f.column) return computed[name];
  return f.read ? f.read(row[f.column]) : row[f.column];
}

export class FieldMap<F extends Fields> {
  private readonly entries: Array<[string, Field]>;

  constructor(readonly fields: F) {
    this.entries = Object.entries(fields);
  }

  /** The response schema, all fields or only the list shape's. */
  response(options: { shape?: 'full' | 'summary'; extra?: TProperties } = {}): TObject<{ [K in keyof F]: F[K]['schema'] }> {
    const props: TProperties = {};
    for (const [name, f] of this.entries) if (options.shape !== 'summary' || f.summary !== false) props[name] = f.schema;
    return Type.Object({ ...props, ...options.extra }) as never;
  }

  /** The list shape's response schema (fields with `summary: false` left out). */
  summaryResponse(): TUnsafe<Partial<ApiOf<F>>> {
    return this.response({ shape: 'summary' }) as never;
  }

  /** The create body: writable fields (required or optional), plus `extra` (e.g. locale, translationGroup). */
  createBody<E extends TProperties = {}>(extra: E = {} as E): TObject<CreateProps<F> & E> {
    const props: TProperties = {};
    for (const [name, f] of this.entries) {
      if (!f.input || f.create === false) continue;
      props[name] = f.create === 'required' ? f.input : Type.Optional(f.input);
    }
    return Type.Object({ ...props, ...extra }) as never;
  }

  /** The update body: every field accepted on update, all optional, at least one. */
  updateBody<E extends TProperties = {}>(extra: E = {} as E): TObject<UpdateProps<F> & E> {
    const props: TProperties = {};
    for (const [name, f] of this.entries) if (f.input && f.update !== false) props[name] = Type.Optional(f.updateInput ?? f.input);
    return Type.Object({ ...props, ...extra }, { minProperties: 1 }) as never;
  }

  /** The API object of a row; computed fields come from `computed`. */
  toApi(row: Row, computed: Row = {}): ApiOf<F> {
    const out: Row = {};
    for (const [name, f] of this.entries) out[name] = fieldValue(f, name, row, computed);
    return out as ApiOf<F>;
  }

  /** The list shape of a row. */
  toSummary(row: Row, computed: Row = {}): Partial<ApiOf<F>> {
    const out: Row = {};
    for (const [name, f] of this.entries) if (f.summary !== false) out[name] = fieldValue(f, name, row, computed);
    return out as Partial<ApiOf<F>>;
  }

  /** The columns a shape reads, for a select list. */
  columns(shape: 'full' | 'summary' = 'full'): string[] {
    const out: string[] = [];
    for (const [, f] of this.entries) {
      if (shape === 'summary' && f.summary === false) continue;
      if (f.column) out.push(f.column);
      if (f.columns) out.push(...f.columns);
    }
    return [...new Set(out)];
  }

  /** The row to insert from a create body (writable fields only; the caller adds the rest). */
  insertRow(input: Row): Row {
    const row: Row = {};
    for (const [name, f] of this.entries) {
      if (!f.column || !f.input || f.create === false) continue;
      const value = input[name];
      row[f.column] = value === undefined ? (f.insertDefault ?? null) : f.write ? f.write(value) : value;
    }
    return row;
  }

  /** The columns an update body changes (fields not sent are left out). */
  patch(input: Row): Row {
    const out: Row = {};
    for (const [name, f] of this.entries) {
      if (!f.column || !f.input || f.update === false || f.immutable) continue;
      const value = input[name];
      if (value !== undefined) out[f.column] = f.write ? f.write(value) : value;
    }
    return out;
  }

  /** Fields sent with a value other than the stored one although they are immutable: [field, code]. */
  immutableChanges(input: Row, stored: Row): Array<[string, ErrorCode, unknown]> {
    const out: Array<[string, ErrorCode, unknown]> = [];
    for (const [name, f] of this.entries) {
      if (!f.immutable || !f.column || input[name] === undefined) continue;
      const current = f.read ? f.read(stored[f.column]) : stored[f.column];
      if (input[name] !== current) out.push([name, f.immutable, current]);
    }
    return out;
  }

  /** The translated fields' values of a row (compared for completeness). */
  translatedValues(row: Row): Row {
    const out: Row = {};
    for (const [name, f] of this.entries) if (f.translated && f.column) out[name] = row[f.column];
    return out;
  }

  /** The column of an API field name. */
  column(name: keyof F & string): string {
    const c = this.fields[name]?.column;
    if (!c) throw new Error(`Field ${name} has no column`);
    return c;
  }
}

export function fieldMap<F extends Fields>(fields: F): FieldMap<F> {
  return new FieldMap(fields);
}
