import { randomUUID } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { now, parseJson, toJson } from '../../db/json.js';
import type { Db, Executor } from '../../db/types.js';
import { cancelJob, emitEvent, scheduleJob } from '../../jobs/outbox.js';
import type { ListSpec } from '../../kit/repository.js';
import { listQueryFor } from '../../kit/repository.js';
import { csvLine } from '../../shared/csv.js';
import { AppError, issuesError, notFound } from '../../shared/errors.js';
import { pageMeta } from '../../shared/pagination.js';
import { Nullable, Timestamp, named } from '../../shared/schemas.js';
import type { SecretBox } from '../../shared/secrets.js';
import { DEFAULT_HONEYPOT, type FormField, type FormSettings, checkSubmission } from './forms.fields.js';
import * as repo from './forms.repository.js';
import { screen } from '../spam/spam.service.js';
import type { FileStorage } from '../../shared/storage.js';
import type { FieldIssue } from '../../shared/field-schema/index.js';
import { discardAll, type FileRef, fileKey, fileRefsOf, type UploadedFile } from './forms.files.js';
import type { FormRow, SubmissionRow } from './forms.repository.js';

export const SUBMISSION_STATUSES = ['new', 'read', 'spam', 'archived'] as const;
type SubmissionStatus = (typeof SUBMISSION_STATUSES)[number];
/** `unread` is the spec examples' word for `new` (decisions F1). */
export const StatusInput = Type.Unsafe<SubmissionStatus | 'unread'>({
  type: 'string',
  enum: [...SUBMISSION_STATUSES, 'unread'],
  description: '`new` (or `unread`), `read`, `spam`, `archived`',
});
const canonicalStatus = (s: SubmissionStatus | 'unread'): SubmissionStatus => (s === 'unread' ? 'new' : s);

export const Submission = named(
  'FormSubmission',
  Type.Object({
    id: Type.Integer(),
    formId: Type.Integer(),
    status: Type.String({ description: '`new`, `read`, `spam` or `archived`' }),
    data: Type.Object({}, { additionalProperties: true, description: 'The values, keyed by field name' }),
    ipAddress: Nullable(Type.String()),
    userAgent: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Nullable(Timestamp),
  }),
  [
    {
      id: 318,
      formId: 5,
      status: 'new',
      data: { name: 'Grace Hopper', email: 'grace@example.com', topic: 'support', message: 'The contact page shows an old address.' },
      ipAddress: '203.0.113.0',
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
      createdAt: '2026-03-18T09:41:27.000Z',
      updatedAt: null,
    },
  ],
);

const submissionList = {
  sort: ['created_at', 'updated_at', 'status'],
  search: ['search_text'],
  common: ['search', 'ids', 'excludeIds'],
  filters: { status: Type.Optional(StatusInput) },
  apply: (qb, query: { status?: SubmissionStatus | 'unread'; formId: number }) => {
    const q = qb.where('form_id', '=', query.formId);
    return query.status ? q.where('status', '=', canonicalStatus(query.status)) : q;
  },
} satisfies ListSpec<any, any>;
export const SubmissionListQuery = listQueryFor(submissionList);

const toSubmission = (r: SubmissionRow) => ({
  id: Number(r.id),
  formId: Number(r.form_id),
  status: r.status,
  data: parseJson<Record<string, unknown>>(r.data, {}),
  ipAddress: r.ip_address,
  userAgent: r.user_agent,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});
const countsTowardTotal = (status: string) => status !== 'spam';

async function formRow(db: Executor, siteId: string, formId: number): Promise<FormRow> {
  const form = (await db.selectFrom('forms').selectAll().where('site_id', '=', siteId).where('id', '=', formId).executeTakeFirst()) as FormRow | undefined;
  if (!form) throw notFound('form');
  return form;
}

async function submissionRow(db: Executor, siteId: string, formId: number, id: number): Promise<SubmissionRow> {
  const row = (await repo.submissionsTable.find(db, siteId, { form_id: formId, id })) as SubmissionRow | undefined;
  if (!row) throw notFound('submission');
  return row;
}

// ------------------------------------------------------------------------------------------------
// Inbox

export async function listSubmissions(db: Executor, siteId: string, formId: number, query: Static<typeof SubmissionListQuery>) {
  await formRow(db, siteId, formId);
  const search = query.search?.toLowerCase();
  const { rows, total } = await repo.submissionsTable.list(db, siteId, { ...query, search, formId }, submissionList);
  return { data: (rows as SubmissionRow[]).map(toSubmission), meta: pageMeta(total, query.page, query.limit) };
}

export async function getSubmission(db: Executor, siteId: string, formId: number, id: number) {
  return toSubmission(await submissionRow(db, siteId, formId, id));
}

/** A status change; `submissionCount` follows a move into or out of spam in the same transaction. */
export async function setSubmissionStatus(db: Db, siteId: string, formId: number, id: number, input: SubmissionStatus | 'unread') {
  const status = canonicalStatus(input);
  return db.transaction().execute(async (tx) => {
    const row = await submissionRow(tx, siteId, formId, id);
    await repo.submissionsTable.update(tx, siteId, { id }, { status, updated_at: now() });
    await repo.addToCount(tx, siteId, formId, Number(countsTowardTotal(status)) - Number(countsTowardTotal(row.status)));
    return toSubmission(await submissionRow(tx, siteId, formId, id));
  });
}

/** The files a submission references. */
function filesOf(row: SubmissionRow): FileRef[] {
  return fileRefsOf(row.data);
}

/** Deletes a submission, then (committed) its files. */
export async function deleteSubmission(db: Db, storage: FileStorage, siteId: string, formId: number, id: number) {
  const row = await db.transaction().execute(async (tx) => {
    const found = await submissionRow(tx, siteId, formId, id);
    await repo.submissionsTable.delete(tx, siteId, { id });
    if (countsTowardTotal(found.status)) await repo.addToCount(tx, siteId, formId, -1);
    return found;
  });
  for (const f of filesOf(row)) await storage.delete(fileKey(siteId, formId, f.fileId));
}

/** A file of a submission, to download (forms.submissions.view). */
export async function submissionFile(db: Executor, storage: FileStorage, siteId: string, formId: number, id: number, fileId: string) {
  const ref = filesOf(await submissionRow(db, siteId, formId, id)).find((f) => f.fileId === fileId);
  const file = ref ? await storage.read(fileKey(siteId, formId, ref.fileId)) : null;
  if (!ref || !file) throw notFound('file');
  return { ...ref, ...file };
}

/** A cell of the CSV: lists joined with ", ", files by name, the rest as text. */
function cellOf(value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map(String).join(', ');
  if (typeof value === 'object') return String((value as { fileName?: unknown }).fileName ?? JSON.stringify(value));
  return value as string | number | boolean;
}

/**
 * The submissions as CSV (decisions F2), streamed: a header of the form's field names, `status`
 * and `created_at`, then 500 rows per read, oldest first; memory stays flat whatever the inbox.
 */
export async function exportSubmissions(db: Executor, siteId: string, formId: number): Promise<AsyncIterable<string>> {
  const form = await formRow(db, siteId, formId);
  const names = parseJson<FormField[]>(form.schema, []).map((f) => f.name);
  return (async function* () {
    yield `\uFEFF${csvLine([...names, 'status', 'created_at'])}`;
    for (let after = 0; ; ) {
      const rows = await repo.submissionBatch(db, siteId, formId, after, 500);
      if (!rows.length) return;
      let chunk = '';
      for (const r of rows) {
        const data = parseJson<Record<string, unknown>>(r.data, {});
        chunk += csvLine([...names.map((n) => cellOf(data[n])), r.status, r.created_at]);
      }
      yield chunk;
      after = Number(rows[rows.length - 1]!.id);
    }
  })();
}

// ------------------------------------------------------------------------------------------------
// Public submissions (decisions F1, F3, G14)

/** The form a visitor addresses: active only; closed is a 409 with its message; others 404. */
export async function activeForm(db: Executor, siteId: string, slug: string, locale?: string): Promise<FormRow> {
  const form = await repo.formBySlug(db, siteId, slug, locale);
  if (!form || form.status === 'draft' || form.status === 'archived') throw notFound('form');
  if (form.status === 'closed') throw new AppError('FORM_CLOSED', { message: form.closed_message ?? undefined });
  return form;
}

/**
 * A token the public form read hands out: when it was issued (in milliseconds), signed with the
 * server key, for this form. A submission sooner than `minFillSeconds` after it (or without a
 * valid one) is spam. Whole seconds, as tokens were first written, lost up to a second: a token
 * issued at 12.999 s said 12, so a fill at 13.05 s counted as 1.05 s (decisions F12).
 */
export function fillToken(secrets: SecretBox, form: Pick<FormRow, 'id' | 'site_id'>, at = Date.now()): string {
  return `${at}.${secrets.sign(`form-fill:${form.site_id}:${form.id}:${at}`)}`;
}

/** Whether a submission at `now` came sooner than `minSeconds` after its token (or has no valid one). */
export function filledTooFast(secrets: SecretBox, form: Pick<FormRow, 'id' | 'site_id'>, token: unknown, minSeconds: number, now = Date.now()): boolean {
  if (minSeconds <= 0) return false;
  if (typeof token !== 'string') return true;
  const [issued, mac] = token.split('.');
  if (!issued || !/^\d{1,13}$/.test(issued) || mac !== secrets.sign(`form-fill:${form.site_id}:${form.id}:${issued}`)) return true;
  // A token of the first format (whole seconds, ten digits) still counts from its second.
  const issuedMs = issued.length <= 11 ? Number(issued) * 1000 : Number(issued);
  return now - issuedMs < minSeconds * 1000;
}

export const FILL_TOKEN_FIELD = '_fillToken';

export interface Visitor {
  ip: string | null;
  userAgent: string | null;
}

/** The values as one lower-case text for the inbox search (at most 10,000 characters). */
function searchText(data: Record<string, unknown>): string {
  return Object.values(data)
    .flatMap((v) => (Array.isArray(v) ? v : [v]))
    .filter((v) => typeof v === 'string' || typeof v === 'number')
    .join(' ')
    .toLowerCase()
    .slice(0, 10_000);
}

/**
 * A visitor's submission. A filled honeypot or a form filled faster than `minFillSeconds` is
 * stored as spam and answered like any other (a bot learns nothing), and so is text with a blocked
 * word; a blocked address and a failed captcha are refused (spam settings); otherwise the values are
 * checked against the fields (422 with `data.<field>` paths), stored, counted, and announced by
 * `form.submitted` in the same transaction.
 */
export interface Upload {
  files: ReadonlyMap<string, UploadedFile>;
  /** Problems found while reading the files (size, type), reported with the values' own. */
  issues: readonly FieldIssue[];
  storage: FileStorage;
}

/** What a submission is stored with: the database, the server key (fill tokens, captcha secret), the outbound guard. */
export interface SubmitDeps {
  db: Db;
  secrets: SecretBox;
  allowPrivateNetwork: boolean;
}

export interface VisitorSubmission {
  form: FormRow;
  input: Record<string, unknown>;
  visitor: Visitor;
  upload?: Upload;
}

/** A submission's files promoted and its row not yet committed are removed this long after (settleFiles). */
export const SETTLE_FILES_AFTER_MS = 3_600_000;
export const SETTLE_FILES_JOB = 'forms.settle_files';

/** Removes files promoted for a submission that was never committed (the job's payload: their keys). */
export async function settleFiles(storage: FileStorage, keys: readonly string[]): Promise<void> {
  for (const key of keys) await storage.delete(key);
}

export async function submit(deps: SubmitDeps, submission: VisitorSubmission) {
  const { upload } = submission;
  try {
    return await store(deps, submission);
  } catch (err) {
    // Nothing committed: the uploads go too.
    if (upload) await discardAll(upload.storage, upload.files.values());
    throw err;
  }
}

async function store({ db, secrets, allowPrivateNetwork }: SubmitDeps, { form, input, visitor, upload }: VisitorSubmission) {
  const files = upload?.files ?? new Map<string, UploadedFile>();
  const settings = parseJson<FormSettings>(form.settings, {});
  const fields = parseJson<FormField[]>(form.schema, []);
  const honeypot = input[settings.honeypotField ?? DEFAULT_HONEYPOT];
  const trapped =
    (Boolean(form.honeypot_enabled) && honeypot !== undefined && honeypot !== '' && honeypot !== null) ||
    filledTooFast(secrets, form, input[FILL_TOKEN_FIELD], settings.minFillSeconds ?? 0);
  // The site's spam settings (blocked addresses, captcha, blocked words); a trapped bot costs no captcha call.
  const screened = await screen(db, secrets, allowPrivateNetwork, {
    siteId: form.site_id,
    ip: visitor.ip,
    values: input,
    captcha: !trapped && Boolean(form.captcha_enabled),
  });
  const spam = trapped || screened.spam;
  // Spam keeps no files: a bot's uploads never fill the storage.
  const checked = checkSubmission(fields, input, spam ? new Map() : files);
  const issues = [...(upload?.issues ?? []), ...checked.issues.filter((i) => !upload?.issues.some((u) => u.path === i.path))];
  if (!spam && issues.length) throw issuesError('VALIDATION_FAILED', issues);
  const status: SubmissionStatus = spam ? 'spam' : 'new';
  const siteId = form.site_id;
  // The files move to their keys before the row is committed (spam's are discarded after), so a
  // stored submission always has its files; a pending job removes them if the row never comes
  // (a failed commit whose undo failed too, a process killed in between; issue 36 item 1).
  const kept = spam || !upload ? [] : [...files.values()].map((f) => ({ tempKey: f.tempKey, key: fileKey(siteId, Number(form.id), f.fileId) }));
  const settle = kept.length ? `${SETTLE_FILES_JOB}:${randomUUID()}` : null;
  if (settle) {
    const runAt = new Date(Date.now() + SETTLE_FILES_AFTER_MS).toISOString();
    await scheduleJob(db, { siteId, type: SETTLE_FILES_JOB, key: settle, payload: { keys: kept.map((f) => f.key) }, runAt });
  }
  try {
    for (const f of kept) await upload!.storage.promote(f.tempKey, f.key);
    await db.transaction().execute(async (tx) => {
      const at = now();
      const id = await repo.insertSubmission(tx, {
        site_id: siteId,
        form_id: Number(form.id),
        status,
        data: toJson(checked.data),
        search_text: searchText(checked.data),
        ip_address: visitor.ip,
        user_agent: visitor.userAgent?.slice(0, 500) ?? null,
        created_at: at,
      });
      if (settle) await cancelJob(tx, siteId, settle);
      if (spam) return;
      await repo.addToCount(tx, siteId, Number(form.id), 1);
      await emitEvent(
        tx,
        siteId,
        'form.submitted',
        { formId: Number(form.id), formSlug: form.slug, locale: form.locale, submissionId: id, data: checked.data, createdAt: at },
        at,
      );
    });
  } catch (err) {
    // Nothing committed: the promoted files go now, and the job with them; if the store fails again, the job removes them later.
    if (settle) {
      try {
        await settleFiles(
          upload!.storage,
          kept.map((f) => f.key),
        );
        await cancelJob(db, siteId, settle);
      } catch {
        // the job stays
      }
    }
    throw err;
  }
  if (spam && upload) for (const f of files.values()) await upload.storage.discard(f.tempKey);
  return { message: form.success_message ?? 'Thank you.' };
}
