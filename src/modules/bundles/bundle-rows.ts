import { createHash } from 'node:crypto';
import type { SqlDialect } from '../../db/dialect.js';
import type { BundleRow, ColumnKind, TableSpec } from './bundle-tables.js';

/**
 * A row as a bundle carries it, the same from either database: booleans as true/false, JSON
 * columns as JSON values, timestamps as the ISO strings both databases answer.
 */
export function toBundleRow(spec: TableSpec, row: Record<string, unknown>, dialect: SqlDialect): BundleRow {
  const out: BundleRow = {};
  if (spec.id) out.id = row.id;
  for (const [column, kind] of columnsOf(spec, true)) out[column] = fromDb(row[column], kind, dialect);
  return out;
}

/** The bundle's value of a column as the database takes it (how each database stores it: src/db/dialect.ts). */
export function toDbValue(value: unknown, kind: ColumnKind, dialect: SqlDialect): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'json') return dialect.writeJson(value);
  return value;
}

function fromDb(value: unknown, kind: ColumnKind, dialect: SqlDialect): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'bool') return dialect.readBool(value);
  if (kind === 'json') return dialect.readJson(value);
  if (typeof value === 'bigint') return Number(value);
  return value;
}

/** The columns of a table a bundle carries (with `matchOnly` ones when asked). */
export function columnsOf(spec: TableSpec, withMatchOnly = false): Array<[string, ColumnKind]> {
  return [...Object.entries(spec.columns), ...(withMatchOnly ? Object.entries(spec.matchOnly ?? {}) : [])];
}

/** JSON with object keys sorted, so equal values compare equal whatever order a database kept (jsonb sorts keys). */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
