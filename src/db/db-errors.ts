/**
 * Database constraint errors, recognised per dialect and described without the error catalog
 * (db/ stays free of imports from shared/): the errors plugin turns a fault into its catalog error,
 * so a duplicate is a 422 and not a 500. Services check the rules they know first and name the
 * field; this is the safety net for races between the check and the write.
 */
export type DbFault = { kind: 'unique'; field: 'slug' | 'key' | 'name' | null } | { kind: 'reference' } | { kind: 'nul-character' };

export function classifyDbError(error: unknown): DbFault | null {
  if (!error || typeof error !== 'object') return null;
  const e = error as { code?: string; message?: string; constraint?: string };
  // PostgreSQL: 23505 unique_violation, 23503 foreign_key_violation.
  if (e.code === '23505') return uniqueFault(e.constraint ?? '');
  if (e.code === '23503') return { kind: 'reference' };
  // 22P05 untranslatable character, 22021 character not in repertoire: PostgreSQL text cannot hold NUL.
  if (e.code === '22P05' || e.code === '22021') return { kind: 'nul-character' };
  // SQLite: SQLITE_CONSTRAINT_UNIQUE "UNIQUE constraint failed: tags.site_id, tags.locale, tags.slug".
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return uniqueFault((e.message ?? '').split(':')[1] ?? '');
  if (e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return { kind: 'reference' };
  return null;
}

function uniqueFault(where: string): DbFault {
  return { kind: 'unique', field: /slug/.test(where) ? 'slug' : /key/.test(where) ? 'key' : /name/.test(where) ? 'name' : null };
}
