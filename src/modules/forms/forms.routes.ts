import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { etagOf, notModified } from '../../shared/http-cache.js';
import { invalid } from '../../shared/errors.js';
import { Data, Id, Locale, Message, Nullable, named, Paginated, ref, SiteKeyParam } from '../../shared/schemas.js';
import type { App, AppModule } from '../types.js';
import type { FormField, FormSettings } from './forms.fields.js';
import { FormSettingsSchema, forms } from './forms.resource.js';
import * as submissions from './forms.submissions.js';
import { formFilesPrefix, readMultipart } from './forms.files.js';
import type { FileStorage } from '../../shared/storage.js';
import type { FastifyRequest } from 'fastify';
import { publicCaptcha } from '../spam/spam.service.js';
import { parseJson } from '../../db/json.js';
import type { Db } from '../../db/types.js';
import type { SecretBox } from '../../shared/secrets.js';
import { FORM_EVENTS } from './forms.events.js';
import { MULTIPART_ERRORS } from '../../shared/multipart.js';

const tags = ['Forms'];
const FormParams = Type.Object({ id: Id() });
const SubmissionParams = Type.Object({ id: Id(), submissionId: Id() });
const SubmissionRef = ref(submissions.Submission);
/** A submission's values keyed by field name; the form's own fields decide what each must be. */
const FormValuesBody = Type.Record(Type.String(), Type.Unknown(), {
  description: "The values keyed by field name (the form's fields say what each must be)",
  examples: [{ name: 'Grace Hopper', email: 'grace@example.com', topic: 'support', message: 'The contact page shows an old address.' }],
});

const PublicQuery = Type.Object({
  locale: Type.Optional({ ...Locale, description: "The form's locale (default: the site's default locale)" }),
  siteKey: SiteKeyParam,
});
const PublicForm = named(
  'PublicForm',
  Type.Object({
    name: Type.String(),
    slug: Type.String(),
    description: Nullable(Type.String()),
    locale: Type.String(),
    schema: Type.Array(Type.Object({}, { additionalProperties: true })),
    settings: FormSettingsSchema,
    honeypotEnabled: Type.Boolean(),
    successMessage: Nullable(Type.String()),
    redirectUrl: Nullable(Type.String()),
    submitLabel: Nullable(Type.String()),
    captcha: Nullable(
      Type.Object(
        { provider: Type.String(), siteKey: Nullable(Type.String()) },
        { description: "The site's captcha widget, when the form asks for one: send its answer as `captchaToken`" },
      ),
    ),
    fillToken: Type.String({ description: `Send it back as \`${submissions.FILL_TOKEN_FIELD}\` with the submission (the minimum fill time counts from it)` }),
  }),
);
const URLENCODED_LIMIT = 256 * 1024;

/** An HTML form's body: repeated keys become lists (checkbox groups), one key one text. */
function parseUrlencoded(body: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    if (key === '__proto__') continue;
    const had = out[key];
    out[key] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
}

/** The public form read and submission (decisions F1, F3, G14, G19, G20), in a context that also reads HTML form posts. */
function publicRoutes(app: App, db: Db, secrets: SecretBox, allowPrivateNetwork: boolean, storage: FileStorage) {
  const deps = { db, secrets, allowPrivateNetwork };
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: URLENCODED_LIMIT }, (_req, body, done) => {
    done(null, parseUrlencoded(body as string));
  });

  app.get(
    '/public/forms/:slug',
    {
      config: { scope: 'public', siteKey: true, deliveryCache: true },
      schema: {
        tags,
        operationId: 'getPublicForm',
        summary: "An active form's fields, with the site key (ETag, 304)",
        description:
          'Draft and archived forms are 404; a closed form is a 409 `FORM_CLOSED` with its `closedMessage`. The ETag covers the form, not `fillToken`.',
        params: Type.Object({ slug: Type.String({ minLength: 1, maxLength: 255 }) }),
        querystring: PublicQuery,
        response: { 200: Data(ref(PublicForm)), 304: { description: 'Not modified', type: 'null' } },
      },
    },
    async (req, reply) => {
      const siteId = req.publicSite.siteId;
      const form = await submissions.activeForm(db, siteId, req.params.slug, req.query.locale);
      const body = {
        name: form.name,
        slug: form.slug,
        description: form.description,
        locale: form.locale,
        schema: parseJson<FormField[]>(form.schema, []),
        settings: parseJson<FormSettings>(form.settings, {}),
        honeypotEnabled: Boolean(form.honeypot_enabled),
        successMessage: form.success_message,
        redirectUrl: form.redirect_url,
        submitLabel: form.submit_label,
        captcha: form.captcha_enabled ? await publicCaptcha(db, siteId) : null,
      };
      if (notModified(req, reply, etagOf(JSON.stringify(body)), 'public, max-age=60')) return reply.send(null);
      return { data: { ...body, fillToken: submissions.fillToken(secrets, form) } };
    },
  );

  app.post(
    '/public/forms/:slug/submissions',
    {
      config: { scope: 'public', siteKey: true },
      schema: {
        tags,
        operationId: 'submitForm',
        summary: 'Submit an active form, with the site key (JSON or an HTML form post)',
        description:
          'The body holds the values keyed by field name (JSON, `application/x-www-form-urlencoded` from an HTML form: repeated keys for checkbox groups, or `multipart/form-data` when the form has file fields). Unknown keys are dropped; fields hidden by their condition are neither required nor kept. A filled honeypot or a too-fast fill is stored as spam and answered like a success. An HTML form post to a form with `redirectUrl` gets a 303 there; otherwise 201 `{ data: { message } }`. Rate-limited per address.',
        params: Type.Object({ slug: Type.String({ minLength: 1, maxLength: 255 }) }),
        querystring: PublicQuery,
        // Described for the JSON body only, so generated clients type it: Fastify validates a body per
        // declared content type and leaves the HTML form posts (urlencoded, multipart) to the handler.
        body: { content: { 'application/json': { schema: FormValuesBody } } },
        response: {
          201: Data(Type.Object({ message: Type.String() })),
          303: { description: "To the form's redirectUrl", type: 'null' },
          ...MULTIPART_ERRORS,
        },
      },
    },
    async (req, reply) => {
      const siteId = req.publicSite.siteId;
      const form = await submissions.activeForm(db, siteId, req.params.slug, req.query.locale);
      const visitor = { ip: req.ip ?? null, userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null };
      let answer: { message: string };
      if (req.isMultipart()) {
        // Read only now: the site key, the rate limit and the form's state were checked before a byte was stored.
        const read = await readMultipart(req, parseJson<FormField[]>(form.schema, []), storage);
        answer = await submissions.submit(deps, { form, input: read.values, visitor, upload: { files: read.files, issues: read.issues, storage } });
      } else {
        const body = req.body;
        if (body === null || typeof body !== 'object' || Array.isArray(body))
          throw invalid('VALIDATION_FAILED', 'body', 'must be an object of values keyed by field name');
        answer = await submissions.submit(deps, { form, input: body as Record<string, unknown>, visitor });
      }
      const htmlPost = !(req.headers['content-type'] ?? '').includes('json');
      if (htmlPost && form.redirect_url) {
        const target = form.redirect_url.startsWith('/') ? `${req.publicSite.origins[0]}${form.redirect_url}` : form.redirect_url;
        return reply.code(303).header('location', target).send(null);
      }
      return reply.code(201).send({ data: answer });
    },
  );
}

/** Temporary uploads older than this are what a crash left behind. */
const ORPHAN_UPLOAD_MS = 3_600_000;

export const formsModule: AppModule = {
  name: 'forms',
  events: FORM_EVENTS,
  jobs(worker, { storage }) {
    worker.handle(submissions.SETTLE_FILES_JOB, (_ctx, job) => submissions.settleFiles(storage, job.payload.keys as string[]));
    let sweptAt = 0;
    worker.task('forms.sweep_uploads', async () => {
      if (Date.now() - sweptAt < 600_000) return 0;
      sweptAt = Date.now();
      await storage.sweepTemporary(ORPHAN_UPLOAD_MS);
      return 0;
    });
  },
  async routes(app, { db, secrets, config, storage }) {
    const r = forms.routes(db);
    for (const route of [r.list, r.create, r.get, r.update, r.translations, r.copyToLocale]) app.route(route);
    // The form's delete, then (committed) the files of its submissions.
    app.route({
      ...r.delete,
      handler: async (req: FastifyRequest) => {
        const { id } = req.params as { id: number };
        await forms.service.delete(db, req.auth.siteId, id);
        await storage.deletePrefix(formFilesPrefix(req.auth.siteId, id));
        return { message: 'Form deleted.' };
      },
    });

    app.get(
      '/forms/:id/submissions',
      {
        config: { scope: 'forms.submissions.view' },
        schema: {
          tags,
          operationId: 'listFormSubmissions',
          summary: "A form's submissions (inbox)",
          description: 'Filter by `status` (`unread` = `new`), `search` in the values, dates; sort by created_at, updated_at or status.',
          params: FormParams,
          querystring: submissions.SubmissionListQuery,
          response: { 200: Paginated(SubmissionRef) },
        },
      },
      async (req) => submissions.listSubmissions(db, req.auth.siteId, req.params.id, req.query),
    );

    app.get(
      '/forms/:id/submissions/export',
      {
        config: { scope: 'forms.submissions.export' },
        schema: {
          tags,
          operationId: 'exportFormSubmissions',
          summary: 'Every submission as CSV (streamed)',
          description: "Columns: the form's field names, `status`, `created_at`; RFC 4180, UTF-8 with a BOM, formula cells neutralised (decisions F2).",
          params: FormParams,
          response: { 200: { description: 'text/csv', type: 'string' } },
        },
      },
      async (req, reply) => {
        const body = await submissions.exportSubmissions(db, req.auth.siteId, req.params.id);
        reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="form-${req.params.id}-submissions.csv"`);
        return reply.send(Readable.from(body) as never);
      },
    );

    app.get(
      '/forms/:id/submissions/:submissionId',
      {
        config: { scope: 'forms.submissions.view' },
        schema: { tags, operationId: 'getFormSubmission', summary: 'A submission', params: SubmissionParams, response: { 200: Data(SubmissionRef) } },
      },
      async (req) => ({ data: await submissions.getSubmission(db, req.auth.siteId, req.params.id, req.params.submissionId) }),
    );

    app.delete(
      '/forms/:id/submissions/:submissionId',
      {
        config: { scope: 'forms.submissions.delete' },
        schema: { tags, operationId: 'deleteFormSubmission', summary: 'Delete a submission', params: SubmissionParams, response: { 200: Message } },
      },
      async (req) => {
        await submissions.deleteSubmission(db, storage, req.auth.siteId, req.params.id, req.params.submissionId);
        return { message: 'Submission deleted.' };
      },
    );

    app.put(
      '/forms/:id/submissions/:submissionId/status',
      {
        config: { scope: 'forms.update' },
        schema: {
          tags,
          operationId: 'setFormSubmissionStatus',
          summary: "Change a submission's status",
          description: "`new` (or `unread`), `read`, `spam`, `archived`; moving into or out of spam changes the form's `submissionCount`.",
          params: SubmissionParams,
          body: Type.Object({ status: submissions.StatusInput }),
          response: { 200: Data(SubmissionRef) },
        },
      },
      async (req) => ({ data: await submissions.setSubmissionStatus(db, req.auth.siteId, req.params.id, req.params.submissionId, req.body.status) }),
    );

    app.get(
      '/forms/:id/submissions/:submissionId/files/:fileId',
      {
        config: { scope: 'forms.submissions.view' },
        schema: {
          tags,
          operationId: 'getFormSubmissionFile',
          summary: 'Download a file sent with a submission',
          description: 'Sent as an attachment with its sniffed type, `nosniff` and a sandboxing CSP: a file a visitor uploaded never runs in this origin.',
          params: Type.Object({ id: Id(), submissionId: Id(), fileId: Type.String({ format: 'uuid' }) }),
          response: { 200: { description: 'The file', type: 'string' } },
        },
      },
      async (req, reply) => {
        const file = await submissions.submissionFile(db, storage, req.auth.siteId, req.params.id, req.params.submissionId, req.params.fileId);
        return reply
          .header('content-type', file.type)
          .header('content-length', String(file.bytes))
          .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.fileName)}`)
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "default-src 'none'; sandbox")
          .header('cache-control', 'private, no-store')
          .send(file.stream as never);
      },
    );

    await app.register(async (scope) => publicRoutes(scope as App, db, secrets, config.allowPrivateNetwork, storage));
  },
};
