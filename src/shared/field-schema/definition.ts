// Validation of untrusted field-schema definitions.
import {
  DATA_SOURCES,
  FIELD_TYPES,
  IssueList,
  MAX_DATA_SOURCE_FIELDS,
  MAX_DATA_SOURCE_LIMIT,
  MAX_FIELDS_PER_LEVEL,
  MAX_NESTING_LEVELS,
  MAX_OPTIONS,
  isPlainObject,
  type FieldIssue,
  type FieldType,
} from './types.js';

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const RESERVED_NAMES = new Set(['__proto__']);
const TYPE_SET: ReadonlySet<string> = new Set<string>(FIELD_TYPES);
const ITEM_FORBIDDEN_TYPES: ReadonlySet<string> = new Set(['array', 'dataSource']);
const SOURCE_SET: ReadonlySet<string> = new Set<string>(DATA_SOURCES);

/** Where a definition sits: its nesting level, whether it repeats (inside an array), and the dataSource fields seen so far. */
interface Place {
  level: number;
  inArray: boolean;
  dataSources: { count: number };
}

/**
 * Validate an untrusted schema (an array of field definitions). Returns [] when valid.
 * Issues name the offending key, e.g. `schema[3].fields[0].type`.
 */
export function validateFieldSchema(input: unknown, basePath = 'schema'): FieldIssue[] {
  const issues = new IssueList();
  validateLevel(input, basePath, { level: 1, inArray: false, dataSources: { count: 0 } }, 0, issues);
  return issues.list;
}

function validateLevel(input: unknown, path: string, place: Place, minCount: number, issues: IssueList): void {
  if (place.level > MAX_NESTING_LEVELS) {
    issues.add(path, `nesting is too deep: at most ${MAX_NESTING_LEVELS} levels are allowed`);
    return;
  }
  if (!Array.isArray(input)) {
    issues.add(path, 'must be an array of field definitions');
    return;
  }
  const list = input as unknown[];
  if (list.length < minCount) issues.add(path, `must contain at least ${minCount} field definition(s)`);
  if (list.length > MAX_FIELDS_PER_LEVEL) {
    issues.add(path, `too many fields: at most ${MAX_FIELDS_PER_LEVEL} per level (got ${list.length})`);
  }
  const seen = new Set<string>();
  for (let i = 0; i < list.length && !issues.full; i++) {
    validateDefinition(list[i], `${path}[${i}]`, place, seen, issues);
  }
}

function checkOptionalString(def: Record<string, unknown>, key: string, path: string, min: number, max: number, issues: IssueList): void {
  const value = def[key];
  if (value === undefined) return;
  if (typeof value !== 'string') issues.add(`${path}.${key}`, 'must be a string');
  else if (value.length < min || value.length > max) {
    issues.add(`${path}.${key}`, min > 0 ? `must be ${min}-${max} characters` : `must be at most ${max} characters`);
  }
}

function validateDefinition(raw: unknown, path: string, place: Place, seen: Set<string>, issues: IssueList): void {
  if (!isPlainObject(raw)) {
    issues.add(path, 'must be an object');
    return;
  }
  const name = raw.name;
  const namePath = `${path}.name`;
  if (name === undefined || name === null) issues.add(namePath, 'is required');
  else if (typeof name !== 'string') issues.add(namePath, 'must be a string');
  else if (name.length < 1 || name.length > 100) issues.add(namePath, 'must be 1-100 characters');
  else if (!NAME_RE.test(name)) {
    issues.add(namePath, 'must start with a letter or underscore and contain only letters, digits, "_" and "-"');
  } else if (RESERVED_NAMES.has(name)) issues.add(namePath, `"${name}" is a reserved name`);
  else if (seen.has(name)) issues.add(namePath, `duplicate field name "${name}" in this level`);
  else seen.add(name);

  const type = raw.type;
  const typePath = `${path}.type`;
  let validType: FieldType | undefined;
  if (type === undefined || type === null) issues.add(typePath, 'is required');
  else if (typeof type !== 'string' || !TYPE_SET.has(type)) {
    issues.add(typePath, `must be one of: ${FIELD_TYPES.join(', ')}`);
  } else validType = type as FieldType;

  checkOptionalString(raw, 'label', path, 1, 255, issues);
  checkOptionalString(raw, 'description', path, 0, 1000, issues);
  checkOptionalString(raw, 'placeholder', path, 0, 255, issues);
  const required = raw.required;
  if (required !== undefined && typeof required !== 'boolean') issues.add(`${path}.required`, 'must be a boolean');

  if (validType !== undefined) checkTypeSpecific(raw, path, validType, place, issues);
}

/**
 * Type-specific rules. Also used for an array's `items` (a definition without a name),
 * so `items.fields` of an array at level L is level L + 1, like an object's `fields`.
 */
function checkTypeSpecific(def: Record<string, unknown>, path: string, type: FieldType, place: Place, issues: IssueList): void {
  switch (type) {
    case 'string':
    case 'text':
      checkRange(def, path, 'minLength', 'maxLength', true, issues);
      break;
    case 'number':
      checkRange(def, path, 'min', 'max', false, issues);
      break;
    case 'select':
      checkOptions(def.options, `${path}.options`, issues);
      break;
    case 'multiselect':
      checkOptions(def.options, `${path}.options`, issues);
      checkRange(def, path, 'minItems', 'maxItems', true, issues);
      break;
    case 'object': {
      const fields = def.fields;
      if (fields === undefined || fields === null) issues.add(`${path}.fields`, 'is required for object fields');
      else validateLevel(fields, `${path}.fields`, { ...place, level: place.level + 1 }, 1, issues);
      break;
    }
    case 'array':
      checkRange(def, path, 'minItems', 'maxItems', true, issues);
      checkItems(def.items, `${path}.items`, { ...place, inArray: true }, issues);
      break;
    case 'dataSource':
      checkDataSource(def, path, place, issues);
      break;
    default:
      break;
  }
}

function checkItems(items: unknown, path: string, place: Place, issues: IssueList): void {
  if (items === undefined || items === null) {
    issues.add(path, 'is required for array fields');
    return;
  }
  if (!isPlainObject(items)) {
    issues.add(path, 'must be an object with a "type"');
    return;
  }
  const type = items.type;
  if (type === undefined || type === null) {
    issues.add(`${path}.type`, 'is required');
    return;
  }
  if (typeof type !== 'string' || !TYPE_SET.has(type)) {
    issues.add(`${path}.type`, `must be one of: ${FIELD_TYPES.filter((t) => !ITEM_FORBIDDEN_TYPES.has(t)).join(', ')}`);
    return;
  }
  if (ITEM_FORBIDDEN_TYPES.has(type)) {
    issues.add(`${path}.type`, `array items cannot be of type "${type}"`);
    return;
  }
  checkTypeSpecific(items, path, type as FieldType, place, issues);
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function checkRange(def: Record<string, unknown>, path: string, minKey: string, maxKey: string, integer: boolean, issues: IssueList): void {
  const check = integer ? isNonNegativeInteger : isFiniteNumber;
  const expected = integer ? 'must be a non-negative integer' : 'must be a finite number';
  const min = def[minKey];
  const max = def[maxKey];
  let ok = true;
  if (min !== undefined && !check(min)) {
    issues.add(`${path}.${minKey}`, expected);
    ok = false;
  }
  if (max !== undefined && !check(max)) {
    issues.add(`${path}.${maxKey}`, expected);
    ok = false;
  }
  if (ok && typeof min === 'number' && typeof max === 'number' && min > max) {
    issues.add(`${path}.${maxKey}`, `must be greater than or equal to ${minKey} (${min})`);
  }
}

function checkOptions(options: unknown, path: string, issues: IssueList): void {
  if (options === undefined || options === null) {
    issues.add(path, 'is required for select and multiselect fields');
    return;
  }
  if (!Array.isArray(options)) {
    issues.add(path, 'must be an array of options');
    return;
  }
  const list = options as unknown[];
  if (list.length === 0) issues.add(path, 'must contain at least 1 option');
  if (list.length > MAX_OPTIONS) issues.add(path, `too many options: at most ${MAX_OPTIONS}`);
  const seen = new Set<string>();
  for (let i = 0; i < list.length && !issues.full; i++) {
    const opt = list[i];
    const optPath = `${path}[${i}]`;
    let value: string | undefined;
    let valuePath = optPath;
    if (typeof opt === 'string') {
      // Convenience: a plain string counts as { value }.
      if (opt.length < 1 || opt.length > 255) {
        issues.add(optPath, 'must be 1-255 characters');
        continue;
      }
      value = opt;
    } else if (isPlainObject(opt)) {
      valuePath = `${optPath}.value`;
      const v = opt.value;
      if (v === undefined || v === null) issues.add(valuePath, 'is required');
      else if (typeof v !== 'string') issues.add(valuePath, 'must be a string');
      else if (v.length < 1 || v.length > 255) issues.add(valuePath, 'must be 1-255 characters');
      else value = v;
      checkOptionalString(opt, 'label', optPath, 0, 255, issues);
    } else {
      issues.add(optPath, 'must be an object { value, label? } or a string');
      continue;
    }
    if (value !== undefined) {
      if (seen.has(value)) issues.add(valuePath, `duplicate option value "${value}"`);
      else seen.add(value);
    }
  }
}

/** Decisions B2: `{ name, type: "dataSource", label, source, filters?, limit? }`, never repeated inside an array. */
function checkDataSource(def: Record<string, unknown>, path: string, place: Place, issues: IssueList): void {
  if (place.inArray) {
    issues.add(`${path}.type`, 'dataSource fields cannot be inside an array (each item would resolve its own records)');
    return;
  }
  if (++place.dataSources.count === MAX_DATA_SOURCE_FIELDS + 1) {
    issues.add(path, `too many dataSource fields: at most ${MAX_DATA_SOURCE_FIELDS} per schema`);
  }
  const source = def.source;
  if (source === undefined || source === null) issues.add(`${path}.source`, 'is required for dataSource fields');
  else if (typeof source !== 'string' || !SOURCE_SET.has(source)) issues.add(`${path}.source`, `must be one of: ${DATA_SOURCES.join(', ')}`);
  const limit = def.limit;
  if (limit !== undefined && !(isNonNegativeInteger(limit) && limit >= 1 && limit <= MAX_DATA_SOURCE_LIMIT)) {
    issues.add(`${path}.limit`, `must be an integer from 1 to ${MAX_DATA_SOURCE_LIMIT}`);
  }
  const filters = def.filters;
  if (filters !== undefined && !isPlainObject(filters)) issues.add(`${path}.filters`, "must be an object of the source list's filters");
}
