import type { Selectable } from 'kysely';
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

export function formBySlug(db: Executor, siteId: string, locale: string, slug: string): Promise<FormRow | undefined> {
  return db.selectFrom('forms').selectAll().where('site_id', '=', siteId).where('locale', '=', locale).where('slug', '=', slug).executeTakeFirst();
}

/** Adds `delta` to a form's count of non-spam submissions, in the caller's transaction (one atomic statement). */
export async function addToCount(db: Executor, siteId: string, formId: number, delta: number): Promise<void> {
  if (delta === 0) return;
  await db
    .updateTable('forms')
    .set({ submission_count: sql`submission_count + ${delta}` })
    .where('site_id', '=', siteId)
    .where('id', '=', formId)
    .execute();
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
