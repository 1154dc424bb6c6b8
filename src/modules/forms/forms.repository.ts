import type { Insertable, Selectable } from 'kysely';
import { prepared } from '../../db/prepared.js';
import { sql } from 'kysely';
import type { AutoId, Bool, Executor, Json, Timestamp } from '../../db/types.js';
import { tableRepository } from '../../kit/repository.js';

export interface FormsTable {
  id: AutoId;
  site_id: string;
  name: string;
  slug: string;
  description: string | null;
  status: 'draft' | 'active' | 'closed' | 'archived';
  locale: string;
  translation_group: string;
  schema: Json<unknown[]>;
  settings: Json<Record<string, unknown>>;
  notifications: Json<Record<string, unknown>>;
  honeypot_enabled: Bool;
  captcha_enabled: Bool;
  success_message: string | null;
  redirect_url: string | null;
  submit_label: string | null;
  closed_message: string | null;
  submission_count: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FormSubmissionsTable {
  id: AutoId;
  site_id: string;
  form_id: number;
  status: 'new' | 'read' | 'spam' | 'archived';
  data: Json<Record<string, unknown>>;
  search_text: string;
  ip_address: string | null;
  user_agent: string | null;
  created_at: Timestamp;
  updated_at: Timestamp | null;
}

declare module '../../db/types.js' {
  interface DB {
    forms: FormsTable;
    form_submissions: FormSubmissionsTable;
  }
}

export type FormRow = Selectable<FormsTable>;
export type SubmissionRow = Selectable<FormSubmissionsTable>;

export const submissionsTable = tableRepository('form_submissions');

// The public submission path runs on every visitor's post: its statements are prepared (P16).
const formBySlugQuery = prepared((db, p: { siteId: string; slug: string; locale?: string }) =>
  db
    .selectFrom('forms')
    .selectAll()
    .where('site_id', '=', p.siteId)
    .where('slug', '=', p.slug)
    .where('locale', '=', p.locale ?? ((eb) => eb.selectFrom('sites').select('sites.default_locale').where('sites.id', '=', p.siteId))),
);

/** A form by slug in `locale`, or without one in the site's default locale (looked up in the same statement). */
export function formBySlug(db: Executor, siteId: string, slug: string, locale?: string): Promise<FormRow | undefined> {
  return formBySlugQuery.executeTakeFirst(db, { siteId, slug, locale }) as Promise<FormRow | undefined>;
}

const addToCountQuery = prepared((db, p: { siteId: string; formId: number; delta: number }) =>
  db
    .updateTable('forms')
    .set({ submission_count: sql`submission_count + ${p.delta}` })
    .where('site_id', '=', p.siteId)
    .where('id', '=', p.formId),
);

/** Adds `delta` to a form's count of non-spam submissions, in the caller's transaction (one atomic statement). */
export async function addToCount(db: Executor, siteId: string, formId: number, delta: number): Promise<void> {
  if (delta === 0) return;
  await addToCountQuery.execute(db, { siteId, formId, delta });
}

const insertSubmissionQuery = prepared((db, p: Insertable<FormSubmissionsTable>) => db.insertInto('form_submissions').values(p).returning('id'));

export async function insertSubmission(db: Executor, row: Insertable<FormSubmissionsTable>): Promise<number> {
  const [inserted] = await insertSubmissionQuery.execute(db, row);
  return Number(inserted!.id);
}

/** A form's submissions in id order, `batch` at a time after `afterId` (the CSV export's pages). */
export function submissionBatch(db: Executor, siteId: string, formId: number, afterId: number, batch: number) {
  return db
    .selectFrom('form_submissions')
    .select(['id', 'status', 'data', 'created_at'])
    .where('site_id', '=', siteId)
    .where('form_id', '=', formId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(batch)
    .execute();
}
