// Normalisation of a validated schema before it is stored.
import { isPlainObject, type FieldDefinition } from './types.js';

function normalizeOptions(options: unknown): unknown {
  if (!Array.isArray(options)) return options;
  return (options as unknown[]).map((opt) => (typeof opt === 'string' ? { value: opt } : opt));
}

function normalizeDefinition(def: unknown): unknown {
  if (!isPlainObject(def)) return def;
  const out: Record<string, unknown> = { ...def };
  if ('options' in out) out.options = normalizeOptions(out.options);
  if (Array.isArray(out.fields)) out.fields = (out.fields as unknown[]).map(normalizeDefinition);
  const items = out.items;
  if (isPlainObject(items)) {
    const outItems: Record<string, unknown> = { ...items };
    if ('options' in outItems) outItems.options = normalizeOptions(outItems.options);
    if (Array.isArray(outItems.fields)) outItems.fields = (outItems.fields as unknown[]).map(normalizeDefinition);
    out.items = outItems;
  }
  return out;
}

/**
 * Return a copy of a schema (already accepted by validateFieldSchema) in which plain-string
 * select/multiselect options (accepted as a convenience) become `{ value }`, at every level,
 * so that the stored schema matches the FieldDefinition type. Other keys are kept as they are.
 */
export function normalizeFieldSchema(schema: unknown): FieldDefinition[] {
  if (!Array.isArray(schema)) return [];
  return (schema as unknown[]).map(normalizeDefinition) as FieldDefinition[];
}
