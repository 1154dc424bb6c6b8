import type { Executor, SitesTable } from '../../db/types.js';
import type { Insertable, Updateable } from 'kysely';

export function findSite(db: Executor, siteId: string) {
  return db.selectFrom('sites').selectAll().where('id', '=', siteId).executeTakeFirst();
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
