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
  dataSource?: { source: string; limit?: number; filter?: Record<string, unknown> };
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
