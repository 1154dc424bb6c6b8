import RE2 from 're2';
import { isValidDate, isValidEmail } from '../../shared/field-schema/index.js';
import type { FieldIssue } from '../../shared/field-schema/index.js';

/**
 * The fields of a form (spec "Form", decisions F3, F4-F6): their definitions as an API body sends
 * them, checked and normalised once on write, and the values a visitor submits, checked against
 * them on every submission.
 */
export const FORM_FIELD_TYPES = [
  'text',
  'email',
  'tel',
  'textarea',
  'select',
  'checkbox',
  'radio',
  'date',
  'datetime',
  'time',
  'number',
  'file',
  'rating',
  'hidden',
] as const;
export type FormFieldType = (typeof FORM_FIELD_TYPES)[number];

export const MAX_FORM_FIELDS = 100;
export const MAX_PAGES = 20;
export const MAX_OPTIONS = 100;
export const DEFAULT_HONEYPOT = '_gotcha';
/** Default maximum length of a value when the field sets none: one line, or a textarea. */
const DEFAULT_MAX = { line: 1000, textarea: 10_000 } as const;
export const MAX_RATING = 5;
const OPERATORS = ['equals', 'notEquals', 'contains', 'isEmpty', 'isNotEmpty'] as const;

export interface FormOption {
  value: string;
  label?: string;
}
export interface FormField {
  name: string;
  type: FormFieldType;
  label?: string;
  required?: boolean;
  placeholder?: string;
  helpText?: string;
  options?: FormOption[];
  defaultValue?: string;
  validation?: { minLength?: number; maxLength?: number; min?: number; max?: number; pattern?: string; accept?: string[]; maxSizeMb?: number };
  condition?: { field: string; operator: (typeof OPERATORS)[number]; value?: string };
}
export interface FormSettings {
  honeypotField?: string;
  minFillSeconds?: number;
  pages?: Array<{ title?: string; fields: string[] }>;
}

const NAME_RE = /^[A-Za-z][A-Za-z0-9_-]{0,99}$/;
const TYPES: ReadonlySet<string> = new Set(FORM_FIELD_TYPES);
const WITH_OPTIONS: ReadonlySet<string> = new Set(['select', 'radio', 'checkbox']);
const TEXTUAL: ReadonlySet<string> = new Set(['text', 'textarea', 'email', 'tel', 'hidden']);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isCount = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

class Issues {
  readonly list: FieldIssue[] = [];
  add(path: string, message: string) {
    if (this.list.length < 100) this.list.push({ path, message });
  }
}

function optionalText(issues: Issues, def: Record<string, unknown>, key: string, path: string, max: number) {
  const v = def[key];
  if (v !== undefined && (typeof v !== 'string' || v.length > max)) issues.add(`${path}.${key}`, `must be a string of at most ${max} characters`);
}

/** A definition's validation rules, as far as its type uses them. */
function checkValidation(issues: Issues, type: string, v: unknown, path: string) {
  if (v === undefined) return;
  if (!isObject(v)) return issues.add(path, 'must be an object');
  const known = new Set(['minLength', 'maxLength', 'min', 'max', 'pattern', 'accept', 'maxSizeMb']);
  for (const k of Object.keys(v)) if (!known.has(k)) issues.add(`${path}.${k}`, `is not a validation rule (${[...known].join(', ')})`);
  for (const k of ['minLength', 'maxLength'])
    if (v[k] !== undefined && !(isCount(v[k]) && (v[k] as number) <= 100_000)) issues.add(`${path}.${k}`, 'must be an integer from 0 to 100000');
  for (const k of ['min', 'max'])
    if (v[k] !== undefined && !(typeof v[k] === 'number' && Number.isFinite(v[k]))) issues.add(`${path}.${k}`, 'must be a finite number');
  if (typeof v.min === 'number' && typeof v.max === 'number' && v.min > v.max) issues.add(`${path}.max`, 'must be at least min');
  if (isCount(v.minLength) && isCount(v.maxLength) && (v.minLength as number) > (v.maxLength as number))
    issues.add(`${path}.maxLength`, 'must be at least minLength');
  if (type === 'rating' && v.max !== undefined && !(Number.isInteger(v.max) && (v.max as number) >= 1 && (v.max as number) <= MAX_RATING)) {
    issues.add(`${path}.max`, `must be an integer from 1 to ${MAX_RATING}`);
  }
  if (v.pattern !== undefined) {
    if (typeof v.pattern !== 'string' || v.pattern.length > 500) issues.add(`${path}.pattern`, 'must be a string of at most 500 characters');
    else if (!TEXTUAL.has(type)) issues.add(`${path}.pattern`, 'applies to text, textarea, email, tel and hidden fields');
    else {
      try {
        new RE2(v.pattern, 'u');
      } catch {
        issues.add(`${path}.pattern`, 'is not a valid RE2 regular expression (no backreferences or lookaround)');
      }
    }
  }
  if (
    v.accept !== undefined &&
    !(Array.isArray(v.accept) && v.accept.length <= 20 && v.accept.every((a) => typeof a === 'string' && /^[a-z]+\/(\*|[a-z0-9.+-]+)$/i.test(a)))
  ) {
    issues.add(`${path}.accept`, 'must be a list of up to 20 media types like "image/*" or "application/pdf"');
  }
  if (v.maxSizeMb !== undefined && !(typeof v.maxSizeMb === 'number' && v.maxSizeMb > 0 && v.maxSizeMb <= 10))
    issues.add(`${path}.maxSizeMb`, 'must be a number above 0 and at most 10');
}

function checkOptions(issues: Issues, type: string, raw: unknown, path: string): FormOption[] | undefined {
  if (!WITH_OPTIONS.has(type)) {
    if (raw !== undefined) issues.add(path, 'only select, radio and checkbox fields have options');
    return undefined;
  }
  if (raw === undefined && type === 'checkbox') return undefined; // a single checkbox: a yes/no (consent) field
  if (!Array.isArray(raw) || raw.length < 1 || raw.length > MAX_OPTIONS) {
    issues.add(path, `must be a list of 1 to ${MAX_OPTIONS} options`);
    return undefined;
  }
  const out: FormOption[] = [];
  const seen = new Set<string>();
  for (const [i, o] of raw.entries()) {
    const opt = typeof o === 'string' ? { value: o } : o;
    if (!isObject(opt) || typeof opt.value !== 'string' || opt.value.length < 1 || opt.value.length > 255) {
      issues.add(`${path}[${i}]`, 'must be a string or { value, label? } with a value of 1-255 characters');
      continue;
    }
    if (opt.label !== undefined && (typeof opt.label !== 'string' || opt.label.length > 255)) {
      issues.add(`${path}[${i}].label`, 'must be a string of at most 255 characters');
      continue;
    }
    if (seen.has(opt.value)) {
      issues.add(`${path}[${i}].value`, `duplicate option "${opt.value}"`);
      continue;
    }
    seen.add(opt.value);
    out.push(opt.label === undefined ? { value: opt.value } : { value: opt.value, label: opt.label as string });
  }
  return out;
}

/** Follows conditions from `name`: true when they come back to a field already on the path. */
function conditionCycle(byName: Map<string, FormField>, name: string): boolean {
  const seen = new Set<string>();
  for (let at: string | undefined = name; at; at = byName.get(at)?.condition?.field) {
    if (seen.has(at)) return true;
    seen.add(at);
  }
  return false;
}

/** Checks and normalises a form's fields (`[...]` or `{ fields: [...] }`); issues name paths like `schema[2].options[0]`. */
export function parseFormSchema(input: unknown): { ok: true; fields: FormField[] } | { ok: false; issues: FieldIssue[] } {
  const issues = new Issues();
  const list = Array.isArray(input) ? input : isObject(input) && Array.isArray(input.fields) ? input.fields : null;
  if (!list) return { ok: false, issues: [{ path: 'schema', message: 'must be a list of field definitions' }] };
  if (list.length > MAX_FORM_FIELDS) issues.add('schema', `at most ${MAX_FORM_FIELDS} fields`);
  const fields: FormField[] = [];
  const at = new Map<FormField, number>();
  const names = new Set<string>();
  for (const [i, raw] of list.entries()) {
    const path = `schema[${i}]`;
    if (!isObject(raw)) {
      issues.add(path, 'must be an object');
      continue;
    }
    const { name, type } = raw;
    if (typeof name !== 'string' || !NAME_RE.test(name)) issues.add(`${path}.name`, 'must start with a letter and hold letters, digits, "_" or "-" (1-100)');
    else if (names.has(name)) issues.add(`${path}.name`, `duplicate field name "${name}"`);
    else names.add(name);
    if (typeof type !== 'string' || !TYPES.has(type)) {
      issues.add(`${path}.type`, `must be one of: ${FORM_FIELD_TYPES.join(', ')}`);
      continue;
    }
    optionalText(issues, raw, 'label', path, 255);
    optionalText(issues, raw, 'placeholder', path, 255);
    optionalText(issues, raw, 'helpText', path, 1000);
    optionalText(issues, raw, 'defaultValue', path, 1000);
    if (raw.required !== undefined && typeof raw.required !== 'boolean') issues.add(`${path}.required`, 'must be a boolean');
    checkValidation(issues, type, raw.validation, `${path}.validation`);
    const options = checkOptions(issues, type, raw.options, `${path}.options`);
    // Only the keys of a definition are kept (decisions G7: unknown fields are never stored).
    const field = { name, type } as FormField;
    for (const key of ['label', 'required', 'placeholder', 'helpText', 'defaultValue', 'validation', 'condition'] as const) {
      if (raw[key] !== undefined) (field as unknown as Record<string, unknown>)[key] = raw[key];
    }
    if (options) field.options = options;
    if (raw.condition !== undefined) {
      const c = raw.condition;
      if (!isObject(c) || typeof c.field !== 'string' || !OPERATORS.includes(c.operator as never)) {
        issues.add(`${path}.condition`, `must be { field, operator (${OPERATORS.join(', ')}), value? }`);
      } else if (c.value !== undefined && typeof c.value !== 'string') issues.add(`${path}.condition.value`, 'must be a string');
    }
    fields.push(field);
    at.set(field, i);
  }
  const byName = new Map(fields.map((f) => [f.name, f]));
  for (const f of fields) {
    const target = f.condition?.field;
    if (typeof target !== 'string') continue;
    const path = `schema[${at.get(f)}].condition.field`;
    if (target === f.name || !byName.has(target)) issues.add(path, 'must name another field of the form');
    else if (conditionCycle(byName, f.name)) issues.add(path, 'conditions must not form a cycle');
  }
  return issues.list.length ? { ok: false, issues: issues.list } : { ok: true, fields };
}

/** Checks a form's settings against its fields: honeypot name, minimum fill time, pages. */
export function checkFormSettings(settings: FormSettings, fields: readonly FormField[]): FieldIssue[] {
  const issues = new Issues();
  const names = new Set(fields.map((f) => f.name));
  if (settings.honeypotField !== undefined && names.has(settings.honeypotField)) issues.add('settings.honeypotField', 'must not be the name of a form field');
  const placed = new Set<string>();
  settings.pages?.forEach((page, i) => {
    page.fields.forEach((name, j) => {
      if (!names.has(name)) issues.add(`settings.pages[${i}].fields[${j}]`, `"${name}" is not a field of the form`);
      else if (placed.has(name)) issues.add(`settings.pages[${i}].fields[${j}]`, `"${name}" is already on a page`);
      placed.add(name);
    });
  });
  return issues.list;
}

// ------------------------------------------------------------------------------------------------
// Submitted values (decisions F3)

const TEL_RE = /^\+?[0-9 ().\-/]{3,30}$/;
const TIME_RE = /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;
// A browser's datetime-local (no offset) or an ISO 8601 date-time with an offset.
const DATETIME_RE = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,3})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)?$/;
const TRUE = new Set(['true', 'on', '1', 'yes']);
const FALSE = new Set(['false', 'off', '0', 'no', '']);
const patterns = new Map<string, RE2>();
const patternOf = (p: string) => patterns.get(p) ?? patterns.set(p, new RE2(p, 'u')).get(p)!;

const isEmpty = (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) || v === false;
/** A value sent by an HTML form is text, or a list of texts for repeated keys: one text where one is expected. */
const single = (v: unknown) => (Array.isArray(v) && v.length === 1 ? v[0] : v);

/** Whether a field is shown, given the values sent (a field hidden by its condition is neither required nor kept). */
function shown(field: FormField, data: Record<string, unknown>, byName: Map<string, FormField>, depth = 0): boolean {
  const c = field.condition;
  if (!c || depth > MAX_FORM_FIELDS) return true;
  const target = byName.get(c.field);
  if (target && !shown(target, data, byName, depth + 1)) return false;
  const value = single(data[c.field]);
  const text = Array.isArray(value) ? value.map(String) : value === undefined || value === null ? '' : String(value);
  switch (c.operator) {
    case 'isEmpty':
      return isEmpty(value);
    case 'isNotEmpty':
      return !isEmpty(value);
    case 'equals':
      return Array.isArray(text) ? text.length === 1 && text[0] === c.value : text === (c.value ?? '');
    case 'notEquals':
      return Array.isArray(text) ? !(text.length === 1 && text[0] === c.value) : text !== (c.value ?? '');
    case 'contains':
      return Array.isArray(text) ? text.includes(c.value ?? '') : text.includes(c.value ?? '');
  }
}

/** One value, checked and converted (numbers from text, checkboxes to booleans or lists); undefined when absent. */
function checkedValue(field: FormField, raw: unknown, path: string, issues: Issues): unknown {
  const v = field.type === 'checkbox' && field.options ? raw : single(raw);
  const rules = field.validation ?? {};
  const text = (max: number) => {
    if (typeof v !== 'string') return issues.add(path, 'must be text');
    const limit = rules.maxLength ?? max;
    if (v.length > limit) return issues.add(path, `must be at most ${limit} characters`);
    if (rules.minLength !== undefined && v.length < rules.minLength) return issues.add(path, `must be at least ${rules.minLength} characters`);
    if (rules.pattern !== undefined && !patternOf(rules.pattern).test(v)) return issues.add(path, 'does not have the expected format');
    return v;
  };
  switch (field.type) {
    case 'text':
    case 'hidden':
      return text(DEFAULT_MAX.line);
    case 'textarea':
      return text(DEFAULT_MAX.textarea);
    case 'email':
      return typeof v === 'string' && isValidEmail(v.trim()) ? text(254) && v.trim() : issues.add(path, 'must be an e-mail address');
    case 'tel':
      return typeof v === 'string' && TEL_RE.test(v.trim()) && (v.match(/\d/g)?.length ?? 0) >= 3
        ? text(30) && v.trim()
        : issues.add(path, 'must be a telephone number');
    case 'number': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
      if (!Number.isFinite(n)) return issues.add(path, 'must be a number');
      if (rules.min !== undefined && n < rules.min) return issues.add(path, `must be at least ${rules.min}`);
      if (rules.max !== undefined && n > rules.max) return issues.add(path, `must be at most ${rules.max}`);
      return n;
    }
    case 'rating': {
      const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : Number.NaN;
      const max = rules.max ?? MAX_RATING;
      return Number.isInteger(n) && n >= 1 && n <= max ? n : issues.add(path, `must be a whole number from 1 to ${max}`);
    }
    case 'date':
      return typeof v === 'string' && isValidDate(v) ? v : issues.add(path, 'must be a date (YYYY-MM-DD)');
    case 'datetime': {
      const m = typeof v === 'string' ? DATETIME_RE.exec(v) : null;
      return m && isValidDate(m[1]!) ? v : issues.add(path, 'must be a date and time (YYYY-MM-DDTHH:MM, optionally with seconds and an offset)');
    }
    case 'time':
      return typeof v === 'string' && TIME_RE.test(v) ? v : issues.add(path, 'must be a time (HH:MM or HH:MM:SS)');
    case 'select':
    case 'radio':
      return typeof v === 'string' && field.options?.some((o) => o.value === v) ? v : issues.add(path, 'must be one of the options');
    case 'checkbox': {
      if (!field.options) {
        if (typeof v === 'boolean') return v;
        if (typeof v === 'string' && (TRUE.has(v.toLowerCase()) || FALSE.has(v.toLowerCase()))) return TRUE.has(v.toLowerCase());
        return issues.add(path, 'must be true or false');
      }
      const list = Array.isArray(v) ? v : [v];
      const allowed = new Set(field.options.map((o) => o.value));
      if (!list.every((x) => typeof x === 'string' && allowed.has(x))) return issues.add(path, 'must be options of the field');
      return [...new Set(list as string[])];
    }
    case 'file':
      // Only a file read from a multipart body (checkSubmission's `files`) counts, never a value a client typed.
      return issues.add(path, 'must be a file sent as multipart/form-data');
  }
}

/**
 * A submission's data checked against the form's fields (decisions F3): unknown keys dropped,
 * fields hidden by their condition neither required nor kept, each value checked and converted
 * by its type, a required field must be filled (a required single checkbox must be checked).
 */
export function checkSubmission(
  fields: readonly FormField[],
  input: Record<string, unknown>,
  files: ReadonlyMap<string, { fileId: string; fileName: string; size: number; type: string }> = new Map(),
): { data: Record<string, unknown>; issues: FieldIssue[] } {
  const issues = new Issues();
  const byName = new Map(fields.map((f) => [f.name, f]));
  const data: Record<string, unknown> = {};
  for (const field of fields) {
    if (!shown(field, input, byName)) continue;
    if (field.type === 'file') {
      const file = files.get(field.name);
      if (file) data[field.name] = { fileId: file.fileId, fileName: file.fileName, size: file.size, type: file.type };
      else if (field.required) issues.add(`data.${field.name}`, 'is required');
      continue;
    }
    const raw = Object.hasOwn(input, field.name) ? input[field.name] : field.type === 'hidden' ? field.defaultValue : undefined;
    const path = `data.${field.name}`;
    if (isEmpty(single(raw)) && !(field.type === 'checkbox' && !field.options && raw === false)) {
      if (field.required) issues.add(path, field.type === 'checkbox' && !field.options ? 'must be checked' : 'is required');
      else if (field.type === 'checkbox' && !field.options) data[field.name] = false;
      continue;
    }
    const value = checkedValue(field, raw, path, issues);
    if (value === undefined) continue;
    if (field.required && field.type === 'checkbox' && value === false) {
      issues.add(path, 'must be checked');
      continue;
    }
    data[field.name] = value;
  }
  return { data, issues: issues.list };
}
