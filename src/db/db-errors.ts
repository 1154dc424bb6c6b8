import { AppError } from '../shared/errors.js';

/**
 * Database constraint errors, translated per dialect into catalog errors, so a duplicate is a
 * 422 and not a 500. Services check the rules they know first and name the field; this is the
 * safety net for races between the check and the write.
 */
export function translateDbError(error: unknown): AppError | null {
  if (!error || typeof error !== 'object') return null;
  const e = error as { code?: string; message?: string; constraint?: string; detail?: string };
  // PostgreSQL: 23505 unique_violation, 23503 foreign_key_violation.
  if (e.code === '23505') return uniqueError(e.constraint ?? '');
  if (e.code === '23503') return new AppError('REFERENCE_INVALID', { errors: { body: ['A referenced record does not exist.'] } });
  // 22P05 untranslatable character, 22021 character not in repertoire: PostgreSQL text cannot hold NUL.
  if (e.code === '22P05' || e.code === '22021') {
    return new AppError('VALIDATION_FAILED', {
      message: 'Text must not contain NUL characters.',
      errors: { body: ['must not contain NUL (\\u0000) characters'] },
    });
  }
  // SQLite: SQLITE_CONSTRAINT_UNIQUE "UNIQUE constraint failed: tags.site_id, tags.locale, tags.slug".
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    const cols = (e.message ?? '').split(':')[1] ?? '';
    return uniqueError(cols);
  }
  if (e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    return new AppError('REFERENCE_INVALID', { errors: { body: ['A referenced record does not exist.'] } });
  }
  return null;
}

function uniqueError(where: string): AppError {
  const field = /slug/.test(where) ? 'slug' : /key/.test(where) ? 'key' : /name/.test(where) ? 'name' : 'body';
  const code = field === 'slug' ? 'SLUG_TAKEN' : field === 'key' ? 'KEY_TAKEN' : field === 'name' ? 'NAME_TAKEN' : 'UNIQUE_VIOLATION';
  return new AppError(code, { errors: { [field]: [`This ${field === 'body' ? 'value' : field} is already used.`] } });
}
