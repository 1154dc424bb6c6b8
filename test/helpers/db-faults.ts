import { sql } from 'kysely';
import type { Db } from '../../src/db/types.js';
import { TEST_DIALECT } from './app.js';

/**
 * Makes every insert into `table` fail inside the database (a trigger), as a commit that fails
 * after the work before it was done; returns what removes the trigger again.
 */
export async function failInsertsInto(db: Db, table: string): Promise<() => Promise<void>> {
  const name = `fail_${table}_insert`;
  if (TEST_DIALECT === 'sqlite') {
    await sql.raw(`create trigger ${name} before insert on ${table} begin select raise(abort, 'injected failure'); end`).execute(db);
    return async () => void (await sql.raw(`drop trigger ${name}`).execute(db));
  }
  await sql.raw(`create or replace function ${name}() returns trigger as $$ begin raise exception 'injected failure'; end $$ language plpgsql`).execute(db);
  await sql.raw(`create trigger ${name} before insert on ${table} for each row execute function ${name}()`).execute(db);
  return async () => void (await sql.raw(`drop trigger ${name} on ${table}`).execute(db));
}
