import { Type } from 'typebox';
import type { AppModule } from '../types.js';
import type { Executor } from '../../db/types.js';
import { Data } from '../../shared/schemas.js';
import { now, parseJson, toJson } from '../../db/json.js';

const Settings = Type.Object({
  formSubmission: Type.Boolean(),
  newReview: Type.Boolean(),
  reviewApproved: Type.Boolean(),
  contentPublished: Type.Boolean(),
  recipientEmails: Type.Array(Type.String()),
});

const Update = Type.Object(
  {
    formSubmission: Type.Optional(Type.Boolean()),
    newReview: Type.Optional(Type.Boolean()),
    reviewApproved: Type.Optional(Type.Boolean()),
    contentPublished: Type.Optional(Type.Boolean()),
    recipientEmails: Type.Optional(Type.Array(Type.String({ format: 'email', maxLength: 254 }), { maxItems: 20, uniqueItems: true })),
  },
  { minProperties: 1 },
);

async function read(db: Executor, siteId: string) {
  const row = await db.selectFrom('notification_settings').selectAll().where('site_id', '=', siteId).executeTakeFirst();
  return {
    formSubmission: Boolean(row?.form_submission ?? true),
    newReview: Boolean(row?.new_review ?? true),
    reviewApproved: Boolean(row?.review_approved ?? false),
    contentPublished: Boolean(row?.content_published ?? false),
    recipientEmails: parseJson<string[]>(row?.recipient_emails, []),
  };
}

const tags = ['Notification settings'];

/** Notification settings: e-mail preferences per event type (spec "Notification settings"). */
export const notificationsModule: AppModule = {
  name: 'notifications',
  routes(app, { db }) {
    app.get('/settings/notifications', {
      config: { scope: 'notifications.settings.view' },
      schema: { tags, operationId: 'getNotificationSettings', summary: 'E-mail notification preferences', response: { 200: Data(Settings) } },
    }, async (req) => ({ data: await read(db, req.auth.siteId) }));

    app.put('/settings/notifications', {
      config: { scope: 'notifications.settings.update' },
      schema: {
        tags, operationId: 'updateNotificationSettings', summary: 'Update e-mail notification preferences (partial)',
        description: 'Booleans per event type (formSubmission, newReview, reviewApproved, contentPublished) and up to 20 distinct recipient e-mail addresses.',
        body: Update, response: { 200: Data(Settings) },
      },
    }, async (req) => {
      const next = { ...(await read(db, req.auth.siteId)), ...req.body };
      if (next.recipientEmails) next.recipientEmails = [...new Set(next.recipientEmails.map((e) => e.trim().toLowerCase()))];
      const values = {
        form_submission: next.formSubmission, new_review: next.newReview, review_approved: next.reviewApproved,
        content_published: next.contentPublished, recipient_emails: toJson(next.recipientEmails), updated_at: now(),
      };
      await db.insertInto('notification_settings').values({ site_id: req.auth.siteId, ...values })
        .onConflict((oc) => oc.column('site_id').doUpdateSet(values)).execute();
      return { data: await read(db, req.auth.siteId) };
    });
  },
};
