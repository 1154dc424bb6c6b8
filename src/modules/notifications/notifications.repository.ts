import type { Executor } from '../../db/types.js';

export function findSettings(db: Executor, siteId: string) {
  return db.selectFrom('notification_settings').selectAll().where('site_id', '=', siteId).executeTakeFirst();
}

export function upsertSettings(
  db: Executor,
  siteId: string,
  values: {
    form_submission: boolean;
    new_review: boolean;
    review_approved: boolean;
    content_published: boolean;
    recipient_emails: string;
    updated_at: string;
  },
) {
  return db
    .insertInto('notification_settings')
    .values({ site_id: siteId, ...values })
    .onConflict((oc) => oc.column('site_id').doUpdateSet(values))
    .execute();
}
