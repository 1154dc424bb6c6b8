import { parseJson } from '../../db/json.js';
import type { Executor } from '../../db/types.js';
import type { Email } from '../../shared/mailer.js';
import { preferenceOf } from '../../shared/notification-preferences.js';
import type { FormField } from '../forms/forms.fields.js';
import type { FormRow } from '../forms/forms.repository.js';
import { getSettings } from './notifications.service.js';

interface FormNotifications {
  enabled?: boolean;
  recipientEmails?: string[];
  subject?: string;
}

const text = (v: unknown) => (v === null || v === undefined ? '' : Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v));
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

function formEmail(
  siteName: string,
  form: FormRow,
  data: { submissionId: number; data: Record<string, unknown>; createdAt: string },
  recipients: string[],
): Email | null {
  const settings = parseJson<FormNotifications>(form.notifications, {});
  if (settings.enabled === false) return null;
  const to = settings.recipientEmails?.length ? settings.recipientEmails : recipients;
  if (!to.length) return null;
  const fields = parseJson<FormField[]>(form.schema, []);
  const lines = fields.filter((f) => data.data[f.name] !== undefined).map((f) => `${oneLine(f.label || f.name)}: ${text(data.data[f.name])}`);
  return {
    to,
    subject: oneLine(settings.subject || `New submission: ${form.name}`),
    text: `${siteName}: a new submission of the form "${form.name}" (#${data.submissionId}, ${data.createdAt}).\n\n${lines.join('\n')}\n`,
  };
}

function contentEmail(siteName: string, data: Record<string, unknown>, to: string[]): Email {
  const title = oneLine(String(data.title ?? ''));
  const where = typeof data.url === 'string' ? `\n\n${data.url}\n` : '\n';
  return {
    to,
    subject: `Published on ${oneLine(siteName)}: ${title}`,
    text: `"${title}" (${String(data.locale)}) was published at ${String(data.publishedAt)}.${where}`,
  };
}

/**
 * The e-mail for an event (decisions F9), or null when there is nothing to send: the site turned
 * the preference off since, it has no recipients, or the form turned its notifications off. Read
 * when the job runs, so a change of preferences applies to what is still waiting.
 */
export async function emailForEvent(db: Executor, siteId: string, event: string, data: Record<string, unknown>): Promise<Email | null> {
  const preference = preferenceOf(event);
  if (!preference) return null;
  const settings = await getSettings(db, siteId);
  if (!settings[preference]) return null;
  const site = await db.selectFrom('sites').select('name').where('id', '=', siteId).executeTakeFirst();
  if (!site) return null;
  if (event === 'form.submitted') {
    const form = (await db.selectFrom('forms').selectAll().where('site_id', '=', siteId).where('id', '=', Number(data.formId)).executeTakeFirst()) as
      | FormRow
      | undefined;
    return form ? formEmail(site.name, form, data as never, settings.recipientEmails) : null;
  }
  return settings.recipientEmails.length ? contentEmail(site.name, data, settings.recipientEmails) : null;
}
