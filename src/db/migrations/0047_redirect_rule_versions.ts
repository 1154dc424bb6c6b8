import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * A version per site of its redirect rules (decisions HN17): every insert, delete and update of a
 * rule (not of its hit counter, as the change notifications of migration 0015) adds one, by
 * trigger, so no write path can forget it. An import checks its rows against the site's rules
 * before it takes the writer and, inside its transaction, only compares versions: equal, nothing
 * changed and the checks stand; else it checks again there. The import makes the site's row
 * (at 0) before its checks; the triggers only update a row, never make one: a site's deletion
 * deletes its rules, and a row made for it then would name a site that is gone.
 */
const SQLITE_BUMP = (row: 'new' | 'old') => `update redirect_rule_versions set version = version + 1 where site_id = ${row}.site_id`;

const SQLITE_UP = [
  `create trigger redirects_version_insert after insert on redirects begin ${SQLITE_BUMP('new')}; end`,
  `create trigger redirects_version_delete after delete on redirects begin ${SQLITE_BUMP('old')}; end`,
  `create trigger redirects_version_update after update on redirects when old.hit_count is new.hit_count
     begin ${SQLITE_BUMP('new')}; end`,
];

// Before the row, on PostgreSQL: the version row's lock is then taken before the rule's unique
// index entry. After it, a create racing an import for the same source could hold that entry
// while waiting for the version row the import holds, and the import wait for the entry: a deadlock.
const POSTGRES_UP = [
  `create or replace function cairn_redirect_rule_version() returns trigger language plpgsql as $$
   begin
     update redirect_rule_versions set version = version + 1 where site_id = coalesce(new.site_id, old.site_id);
     if tg_op = 'DELETE' then return old; end if;
     return new;
   end $$`,
  `create trigger redirects_version_insert before insert on redirects for each row execute function cairn_redirect_rule_version()`,
  `create trigger redirects_version_delete before delete on redirects for each row execute function cairn_redirect_rule_version()`,
  `create trigger redirects_version_update before update on redirects for each row
     when (old.hit_count is not distinct from new.hit_count) execute function cairn_redirect_rule_version()`,
];

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  await db.schema
    .createTable('redirect_rule_versions')
    .addColumn('site_id', 'text', (col) => col.primaryKey().references('sites.id').onDelete('cascade'))
    .addColumn('version', 'bigint', (col) => col.notNull())
    .execute();
  for (const statement of dialect === 'postgres' ? POSTGRES_UP : SQLITE_UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect === 'postgres') {
    for (const t of ['insert', 'delete', 'update']) await sql.raw(`drop trigger if exists redirects_version_${t} on redirects`).execute(db);
    await sql.raw('drop function if exists cairn_redirect_rule_version()').execute(db);
  } else {
    for (const t of ['insert', 'delete', 'update']) await sql.raw(`drop trigger if exists redirects_version_${t}`).execute(db);
  }
  await db.schema.dropTable('redirect_rule_versions').execute();
}
