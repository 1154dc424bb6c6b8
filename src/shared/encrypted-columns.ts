import { sql } from 'kysely';
import type { Db } from '../db/types.js';
import type { SecretBox } from './secrets.js';

/**
 * Every column that holds SecretBox values (decisions H25), in one list: `cairn secrets rotate`
 * walks it, and test/platform/encrypted-columns.test.ts fails when a column of the database holds
 * an `enc:v1:` value without being listed here, so a new secret cannot be forgotten.
 */
export const ENCRYPTED_COLUMNS = [
  { table: 'webhooks', key: 'id', columns: ['secret', 'previous_secret'] },
  { table: 'spam_settings', key: 'site_id', columns: ['captcha_secret'] },
  { table: 'search_connections', key: 'site_id', columns: ['credentials'] },
] as const;

const BATCH = 500;

type Row = Record<string, string | number | null>;

/**
 * Re-encrypts every stored secret that is not under the current server key (written in clear
 * before encryption, or under a key now in CAIRN_SECRET_KEY_PREVIOUS): the second step of a key
 * rotation. Each row is rewritten only if its values are still what was read (a change through
 * the API meanwhile wins). Safe to run again, and beside servers that already hold the new key.
 */
export async function reencryptSecrets(
  db: Db,
  box: SecretBox,
): Promise<{ rotated: number; checked: number; tables: Record<string, { rotated: number; checked: number }> }> {
  const tables: Record<string, { rotated: number; checked: number }> = {};
  for (const spec of ENCRYPTED_COLUMNS) {
    const counts = { rotated: 0, checked: 0 };
    tables[spec.table] = counts;
    const cols = spec.columns.map((c) => sql.ref(c));
    let after: string | number | null = null;
    for (;;) {
      const { rows }: { rows: Row[] } = await sql<Row>`
        select ${sql.ref(spec.key)} as k, ${sql.join(cols)} from ${sql.table(spec.table)}
        ${after === null ? sql`` : sql`where ${sql.ref(spec.key)} > ${after}`}
        order by ${sql.ref(spec.key)} limit ${BATCH}`.execute(db);
      if (!rows.length) break;
      for (const row of rows) {
        counts.checked++;
        after = row.k as string | number;
        const stale = spec.columns.filter((c) => typeof row[c] === 'string' && box.isStale(row[c] as string));
        if (!stale.length) continue;
        const set = stale.map((c) => sql`${sql.ref(c)} = ${box.encrypt(box.decrypt(row[c] as string))}`);
        const same = stale.map((c) => sql`${sql.ref(c)} = ${row[c]}`);
        const result = await sql`update ${sql.table(spec.table)} set ${sql.join(set)}
          where ${sql.ref(spec.key)} = ${row.k} and ${sql.join(same, sql` and `)}`.execute(db);
        if (Number(result.numAffectedRows ?? 0) > 0) counts.rotated++;
      }
    }
  }
  const sum = (k: 'rotated' | 'checked') => Object.values(tables).reduce((n, t) => n + t[k], 0);
  return { rotated: sum('rotated'), checked: sum('checked'), tables };
}
