// Cairn field-schema engine: validation of field definitions (schemas) and of data against them.
// Used by categories (structured content), contents (customData), site blocks and single types.
export {
  FIELD_TYPES,
  MAX_FIELDS_PER_LEVEL,
  MAX_NESTING_LEVELS,
  MAX_ISSUES,
  DEFAULT_MAX_STRING_LENGTH,
  MAX_OPTIONS,
  DATA_SOURCES,
  DEFAULT_DATA_SOURCE_LIMIT,
  MAX_DATA_SOURCE_FIELDS,
  MAX_DATA_SOURCE_LIMIT,
} from './types.js';
export type { FieldType, FieldIssue, FieldDefinition, FieldOption, DataSourceName } from './types.js';
export { validateFieldSchema } from './definition.js';
export { validateFieldData } from './data.js';
export { normalizeFieldSchema } from './normalize.js';
export { isValidColor, isValidDate, isValidDateTime, isValidEmail, isValidUrl } from './formats.js';

import type { FieldDefinition, FieldIssue } from './types.js';
import { validateFieldSchema } from './definition.js';
import { normalizeFieldSchema } from './normalize.js';

/**
 * Given a chain of ancestors' (schemaSource, schema) from nearest to farthest, return the effective
 * schema: the first with schemaSource 'own' and a non-empty schema, else null.
 */
export function effectiveSchema(chain: Array<{ schemaSource: 'own' | 'inherit'; schema: FieldDefinition[] | null }>): FieldDefinition[] | null {
  for (const link of chain) {
    if (link.schemaSource === 'own' && Array.isArray(link.schema) && link.schema.length > 0) return link.schema;
  }
  return null;
}

/**
 * A field schema as an API body sends it: `[...]` or `{ fields: [...] }` (or null). Returns the
 * validated, normalised definitions, or the issues (paths like `schema[0].type`).
 */
export function fieldSchemaFromInput(
  input: unknown,
  basePath = 'schema',
): { ok: true; schema: FieldDefinition[] | null } | { ok: false; issues: FieldIssue[] } {
  if (input === null || input === undefined) return { ok: true, schema: null };
  const list = Array.isArray(input) ? input : (input as { fields?: unknown }).fields;
  const issues = validateFieldSchema(list, basePath);
  if (issues.length) return { ok: false, issues };
  return { ok: true, schema: normalizeFieldSchema(list as FieldDefinition[]) };
}
