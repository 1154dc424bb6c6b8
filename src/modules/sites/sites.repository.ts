import type { Executor, SitesTable } from '../../db/types.js';
import type { Insertable, Updateable } from 'kysely';
import { prepared } from '../../db/prepared.js';

/**
 * A site's row, read by every site-settings route: a prepared query, so PostgreSQL sessions keep it
 * parsed and planned (decisions PF5) instead of parsing and planning it for every request (0.26 ms of
 * PostgreSQL's CPU against 0.04 ms to run it: decisions PF25).
 */
const siteById = prepared((db, p: { siteId: string }) => db.selectFrom('sites').selectAll().where('id', '=', p.siteId));

export function findSite(db: Executor, siteId: string) {
  return siteById.executeTakeFirst(db, { siteId });
}

export function listSites(db: Executor) {
  return db.selectFrom('sites').selectAll().orderBy('created_at', 'asc').execute();
}

export async function countSites(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('sites')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function slugsIn(db: Executor, candidates: string[]): Promise<Set<string>> {
  const rows = await db.selectFrom('sites').select('slug').where('slug', 'in', candidates).execute();
  return new Set(rows.map((r) => r.slug));
}

export function insertSite(db: Executor, row: Insertable<SitesTable>) {
  return db.insertInto('sites').values(row).execute();
}

export function updateSite(db: Executor, siteId: string, patch: Updateable<SitesTable>) {
  return db.updateTable('sites').set(patch).where('id', '=', siteId).execute();
}

export function insertNotificationDefaults(db: Executor, siteId: string, at: string) {
  return db
    .insertInto('notification_settings')
    .values({
      site_id: siteId,
      form_submission: true,
      new_review: true,
      review_approved: false,
      content_published: false,
      recipient_emails: '[]',
      updated_at: at,
    })
    .execute();
}
