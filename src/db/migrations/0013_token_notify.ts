import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * PostgreSQL: every change to a token's revocation, expiry or scopes (and every deletion) is
 * announced on the channel `cairn_api_tokens` with the token id, from whichever process made it
 * (the CLI, another instance, SQL by hand), so every instance forgets its cached row at once
 * (decisions H23). SQLite needs nothing here: processes sharing a file see each other's commits
 * through `PRAGMA data_version` (db/connect.ts).
 */
const POSTGRES_UP = [
  `create or replace function cairn_notify_api_tokens() returns trigger language plpgsql as $$
   begin
     perform pg_notify('cairn_api_tokens', coalesce(new.id, old.id)::text);
     return null;
   end $$`,
  `create trigger api_tokens_notify_update after update on api_tokens for each row
     when (old.revoked_at is distinct from new.revoked_at or old.expires_at is distinct from new.expires_at or old.scopes is distinct from new.scopes)
     execute function cairn_notify_api_tokens()`,
  `create trigger api_tokens_notify_delete after delete on api_tokens for each row execute function cairn_notify_api_tokens()`,
];

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const statement of POSTGRES_UP) await sql.raw(statement).execute(db);
}
