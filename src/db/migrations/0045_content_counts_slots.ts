import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from './columns.js';

/**
 * PostgreSQL: the per-status content counters (0012, decisions N12) split into slots, one per
 * session (`pg_backend_pid() % 16`), summed when read (the total already reads `sum(n)`). With
 * one row per site and status, every create of a site updated the same row, and that row's lock
 * is held from the contents insert to the commit: concurrent creates of one site ran one at a
 * time behind it (issue 37: a create at 0.10x of the lean server; decisions PF6). A session now
 * counts in its own row; a decrement takes its own row when it has one, else any row of the site
 * and status that holds a count. SQLite has one writer at a time and keeps its single row.
 */
const POSTGRES_UP = [
  'alter table content_counts add column slot smallint not null default 0',
  'alter table content_counts drop constraint content_counts_pkey',
  'alter table content_counts add primary key (site_id, status, slot)',
  `create or replace function cairn_content_counts() returns trigger language plpgsql as $$
   declare
     own smallint := pg_backend_pid() % 16;
   begin
     if tg_op in ('DELETE', 'UPDATE') then
       update content_counts set n = n - 1 where site_id = old.site_id and status = old.status and slot = own;
       if not found then
         update content_counts set n = n - 1
           where (site_id, status, slot) = (select site_id, status, slot from content_counts
             where site_id = old.site_id and status = old.status and n > 0 limit 1);
       end if;
     end if;
     if tg_op in ('INSERT', 'UPDATE') then
       insert into content_counts (site_id, status, slot, n) values (new.site_id, new.status, own, 1)
         on conflict (site_id, status, slot) do update set n = content_counts.n + 1;
     end if;
     return null;
   end $$`,
];

export async function up(db: Kysely<any>, dialect: MigrationDialect): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const statement of POSTGRES_UP) await sql.raw(statement).execute(db);
}
