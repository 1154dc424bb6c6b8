import { Type } from 'typebox';
import type { AppModule } from '../types.js';
import { Data } from '../../shared/schemas.js';
import * as service from './notifications.service.js';
import { EMAIL_JOB } from '../../jobs/outbox.js';
import { emailForEvent } from './notifications.email.js';

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

const tags = ['Notification settings'];

/** Notification settings: e-mail preferences per event type (spec "Notification settings"). */
export const notificationsModule: AppModule = {
  name: 'notifications',
  routes(app, { db }) {
    app.get(
      '/settings/notifications',
      {
        config: { scope: 'notifications.settings.view' },
        schema: { tags, operationId: 'getNotificationSettings', summary: 'E-mail notification preferences', response: { 200: Data(Settings) } },
      },
      async (req) => ({ data: await service.getSettings(db, req.auth.siteId) }),
    );

    app.put(
      '/settings/notifications',
      {
        config: { scope: 'notifications.settings.update' },
        schema: {
          tags,
          operationId: 'updateNotificationSettings',
          summary: 'Update e-mail notification preferences (partial)',
          description:
            'Booleans per event type (formSubmission, newReview, reviewApproved, contentPublished) and up to 20 distinct recipient e-mail addresses.',
          body: Update,
          response: { 200: Data(Settings) },
        },
      },
      async (req) => ({ data: await service.updateSettings(db, req.auth.siteId, req.body) }),
    );
  },
  jobs(worker, { db, mailer }) {
    // E-mail for an event the site wants mailed (jobs/outbox.ts schedules it with the event); a
    // failed send throws, so the worker retries it with backoff.
    worker.handle(EMAIL_JOB, async (_ctx, job) => {
      const { event, data } = job.payload as { event: string; data: Record<string, unknown> };
      const email = await emailForEvent(db, job.siteId, event, data);
      if (email) await mailer.send(email);
    });
  },
};
