import type { Executor } from '../../db/types.js';
import { now, parseJson, toJson } from '../../db/json.js';
import * as repo from './notifications.repository.js';
import { EMAIL_PREFERENCES } from '../../shared/notification-preferences.js';

export interface NotificationSettings {
  formSubmission: boolean;
  newReview: boolean;
  reviewApproved: boolean;
  contentPublished: boolean;
  recipientEmails: string[];
}

export async function getSettings(db: Executor, siteId: string): Promise<NotificationSettings> {
  const row = await repo.findSettings(db, siteId);
  const d = EMAIL_PREFERENCES;
  return {
    formSubmission: Boolean(row?.form_submission ?? d.formSubmission.default),
    newReview: Boolean(row?.new_review ?? d.newReview.default),
    reviewApproved: Boolean(row?.review_approved ?? d.reviewApproved.default),
    contentPublished: Boolean(row?.content_published ?? d.contentPublished.default),
    recipientEmails: parseJson<string[]>(row?.recipient_emails, []),
  };
}

/** Partial update: only the given preferences change; addresses are stored lower case, once each. */
export async function updateSettings(db: Executor, siteId: string, patch: Partial<NotificationSettings>): Promise<NotificationSettings> {
  const next = { ...(await getSettings(db, siteId)), ...patch };
  next.recipientEmails = [...new Set(next.recipientEmails.map((e) => e.trim().toLowerCase()))];
  await repo.upsertSettings(db, siteId, {
    form_submission: next.formSubmission,
    new_review: next.newReview,
    review_approved: next.reviewApproved,
    content_published: next.contentPublished,
    recipient_emails: toJson(next.recipientEmails),
    updated_at: now(),
  });
  return getSettings(db, siteId);
}
