import { parseJson, toJson } from '../../db/json.js';
import type { Executor } from '../../db/types.js';
import { invalid, issuesError } from '../../shared/errors.js';
import { effectiveSchema, type FieldDefinition, fieldSchemaFromInput } from '../../shared/field-schema/index.js';
import * as repo from './categories.repository.js';

type CategoryRow = repo.CategoryRow;
type Mode = 'standard' | 'structured';
type Source = 'own' | 'inherit';

export function schemaOf(r: { schema: unknown }): FieldDefinition[] | null {
  return parseJson<FieldDefinition[] | null>(r.schema, null);
}

/** `[...]` or `{ fields: [...] }` -> the stored JSON of validated, normalised definitions (422 SCHEMA_INVALID with paths). */
export function storedSchema(input: unknown): string | null {
  const parsed = fieldSchemaFromInput(input);
  if (!parsed.ok) throw issuesError('SCHEMA_INVALID', parsed.issues);
  return parsed.schema ? toJson(parsed.schema) : null;
}

/**
 * A parent must be a category of the same site and locale, and never the category itself or one
 * of its descendants (422 PARENT_INVALID). Returns the parent's ancestor chain, nearest first,
 * starting with the parent itself.
 */
export async function checkParent(db: Executor, siteId: string, parentId: number | null, locale: string, selfId?: number): Promise<CategoryRow[]> {
  if (parentId === null) return [];
  const chain = await repo.ancestors(db, siteId, parentId);
  if (!chain.length) throw invalid('PARENT_INVALID', 'parentId', 'The parent is not a category of this site.');
  if (chain[0]!.locale !== locale) throw invalid('PARENT_INVALID', 'parentId', 'The parent must be in the same locale.');
  if (selfId !== undefined && chain.some((c) => Number(c.id) === selfId)) {
    throw invalid('PARENT_INVALID', 'parentId', 'A category cannot be its own ancestor.');
  }
  return chain;
}

/** The schema contents are validated against: own, or the nearest ancestor's when inheriting. */
export function resolveEffective(own: { schemaSource: Source; schema: FieldDefinition[] | null }, chain: CategoryRow[]): FieldDefinition[] | null {
  return effectiveSchema([own, ...chain.map((c) => ({ schemaSource: c.schema_source, schema: schemaOf(c) }))]);
}

/** A structured category must end up with a schema to validate contents against. */
export function checkStructured(mode: Mode, source: Source, effective: FieldDefinition[] | null): void {
  if (mode !== 'structured' || effective) return;
  if (source === 'inherit') throw invalid('SCHEMA_INVALID', 'schemaSource', 'No ancestor has a schema to inherit.');
  throw invalid('SCHEMA_INVALID', 'schema', 'A structured category needs a field schema.');
}

/** Parent, structure and schema of a category as it will be stored, checked together. */
export async function checkTree(
  tx: Executor,
  siteId: string,
  next: { parentId: number | null; locale: string; mode: Mode; source: Source; schema: unknown },
  selfId?: number,
): Promise<void> {
  const chain = await checkParent(tx, siteId, next.parentId, next.locale, selfId);
  checkStructured(next.mode, next.source, resolveEffective({ schemaSource: next.source, schema: schemaOf({ schema: next.schema }) }, chain));
}

/** The schema contents of a category are validated against (own or inherited), or null. */
export async function effectiveSchemaOf(db: Executor, siteId: string, id: number): Promise<FieldDefinition[] | null> {
  const row = await db.selectFrom('categories').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
  if (row?.content_mode !== 'structured') return null;
  const chain = await repo.ancestors(db, siteId, row.parent_id);
  return resolveEffective({ schemaSource: row.schema_source, schema: schemaOf(row) }, chain);
}
