/**
 * An active contact form for the public submission row of `npm run bench` (issue 11), created
 * through the service on the bench site, with the site's notification recipients set (so every
 * submission also schedules its e-mail job, as on a real site).
 */
import type { Db } from '../src/db/types.js';
import { forms } from '../src/modules/forms/forms.resource.js';
import { updateSettings } from '../src/modules/notifications/notifications.service.js';
import type { BenchContext } from './endpoints.js';

export const BENCH_FORM_SCHEMA = [
  { name: 'name', type: 'text', required: true, validation: { maxLength: 100 } },
  { name: 'email', type: 'email', required: true },
  { name: 'topic', type: 'select', options: ['sales', 'support', 'press'] },
  { name: 'message', type: 'textarea', required: true, validation: { maxLength: 5000 } },
];

export async function seedForms(db: Db, siteId: string, _userId: string, _ctx: Readonly<BenchContext>): Promise<Record<string, unknown>> {
  await forms.service.create(db, siteId, { name: 'Contact', slug: 'contact', status: 'active', schema: BENCH_FORM_SCHEMA });
  await updateSettings(db, siteId, { recipientEmails: ['team@bench.test'] });
  return { summary: 'an active contact form with 4 fields; notification e-mails on' };
}
