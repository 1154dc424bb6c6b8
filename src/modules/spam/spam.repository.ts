import type { Insertable, Selectable } from 'kysely';
import { prepared } from '../../db/prepared.js';
import type { Executor, Json, Timestamp } from '../../db/types.js';

export interface SpamSettingsTable {
  site_id: string;
  blocked_words: Json<string[]>;
  blocked_addresses: Json<string[]>;
  captcha_provider: string | null;
  captcha_verify_url: string | null;
  /** Encrypted with the server key (shared/secrets.ts). */
  captcha_secret: string | null;
  captcha_site_key: string | null;
  updated_at: Timestamp;
}

declare module '../../db/types.js' {
  interface DB {
    spam_settings: SpamSettingsTable;
  }
}

export type SpamSettingsRow = Selectable<SpamSettingsTable>;

// Read on every form submission: prepared (P16).
const settingsQuery = prepared((db, p: { siteId: string }) => db.selectFrom('spam_settings').selectAll().where('site_id', '=', p.siteId));

export function findSettings(db: Executor, siteId: string): Promise<SpamSettingsRow | undefined> {
  return settingsQuery.executeTakeFirst(db, { siteId }) as Promise<SpamSettingsRow | undefined>;
}

export async function saveSettings(db: Executor, row: Insertable<SpamSettingsTable>): Promise<void> {
  const { site_id: _siteId, ...values } = row;
  await db
    .insertInto('spam_settings')
    .values(row)
    .onConflict((oc) => oc.column('site_id').doUpdateSet(values))
    .execute();
}
