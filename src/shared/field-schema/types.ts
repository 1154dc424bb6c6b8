// Shared constants and types of the field-schema engine.

export const FIELD_TYPES = [
  'string',
  'text',
  'richtext',
  'number',
  'boolean',
  'select',
  'multiselect',
  'image',
  'file',
  'url',
  'email',
  'date',
  'datetime',
  'color',
  'object',
  'array',
  'dataSource',
] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

/** At most this many field definitions in one level (top level, an object's `fields`, an array's `items.fields`). */
export const MAX_FIELDS_PER_LEVEL = 250;
/** The top level is level 1; each `fields` / `items.fields` is one level deeper. Levels 1..5 are allowed. */
export const MAX_NESTING_LEVELS = 5;
/** The groups a dataSource field can read (decisions B2). */
export const DATA_SOURCES = ['contents', 'categories', 'tags', 'variables', 'forms', 'siteBlocks'] as const;
export type DataSourceName = (typeof DATA_SOURCES)[number];
/** A dataSource field resolves at most this many records (decisions B2: 1-100; 10 when omitted). */
export const MAX_DATA_SOURCE_LIMIT = 100;
export const DEFAULT_DATA_SOURCE_LIMIT = 10;
/** At most this many dataSource fields in one schema, so one read resolves at most 1,000 records. */
export const MAX_DATA_SOURCE_FIELDS = 10;
/** Validation stops collecting after this many issues. */
export const MAX_ISSUES = 100;
/** Default maximum length of string/text values when the definition has no `maxLength`. */
export const DEFAULT_MAX_STRING_LENGTH = 100_000;
/** At most this many options in a select/multiselect definition. */
export const MAX_OPTIONS = 500;

export interface FieldIssue {
  path: string;
  message: string;
}

export interface FieldOption {
  value: string;
  label?: string;
}

export interface FieldDefinition {
  name: string;
  type: FieldType;
  label?: string;
  description?: string;
  required?: boolean;
  options?: Array<{ value: string; label?: string }>;
  items?: {
    type: Exclude<FieldType, 'array' | 'dataSource'>;
    fields?: FieldDefinition[];
    options?: Array<{ value: string; label?: string }>;
  };
  fields?: FieldDefinition[];
  min?: number;
  max?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  /** dataSource fields (decisions B2): the group read, its list filters, how many records. */
  source?: DataSourceName;
  filters?: Record<string, unknown>;
  limit?: number;
  defaultValue?: unknown;
  placeholder?: string;
  [extra: string]: unknown;
}

/** Collects issues up to MAX_ISSUES. */
export class IssueList {
  readonly list: FieldIssue[] = [];

  add(path: string, message: string): void {
    if (this.list.length < MAX_ISSUES) this.list.push({ path, message });
  }

  get full(): boolean {
    return this.list.length >= MAX_ISSUES;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function hasOwn(obj: object, key: string): boolean {
  return Object.hasOwn(obj, key);
}

/** Option values of a select/multiselect definition; plain strings count as `{ value }`. */
export function optionValues(options: unknown): Set<string> {
  const values = new Set<string>();
  if (!Array.isArray(options)) return values;
  for (const opt of options as unknown[]) {
    if (typeof opt === 'string') values.add(opt);
    else if (isPlainObject(opt) && typeof opt.value === 'string') values.add(opt.value);
  }
  return values;
}
