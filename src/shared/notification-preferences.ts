/**
 * The e-mail preferences of the spec's notification settings: each column, its default for a site
 * that never saved its settings, and the event that triggers it (for those whose event exists).
 * Read by the notification settings and by the outbox, which schedules an e-mail job with an event
 * only when the site wants one.
 */
export const EMAIL_PREFERENCES = {
  formSubmission: { column: 'form_submission', default: true, event: 'form.submitted' },
  newReview: { column: 'new_review', default: true, event: null },
  reviewApproved: { column: 'review_approved', default: false, event: null },
  contentPublished: { column: 'content_published', default: false, event: 'content.published' },
} as const;

export type EmailPreference = keyof typeof EMAIL_PREFERENCES;

/** The preference an event type triggers, if any. */
export function preferenceOf(event: string): EmailPreference | null {
  for (const [name, p] of Object.entries(EMAIL_PREFERENCES)) if (p.event === event) return name as EmailPreference;
  return null;
}
