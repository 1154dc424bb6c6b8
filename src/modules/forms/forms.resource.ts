import { Type } from 'typebox';
import { parseJson, toJson } from '../../db/json.js';
import { common, fieldMap } from '../../kit/fields.js';
import { translatableResource } from '../../kit/translatable.js';
import { issuesError } from '../../shared/errors.js';
import { Nullable, named, ref, UrlOrPath } from '../../shared/schemas.js';
import { SLUG_PATTERN } from '../../shared/slug.js';
import { checkFormSettings, FORM_FIELD_TYPES, type FormField, type FormSettings, MAX_PAGES, parseFormSchema } from './forms.fields.js';
import './forms.repository.js';

export const FORM_STATUSES = ['draft', 'active', 'closed', 'archived'] as const;
const Status = Type.Unsafe<(typeof FORM_STATUSES)[number]>({
  type: 'string',
  enum: [...FORM_STATUSES],
  description: '`draft` (default), `active` (accepts submissions), `closed` (answers 409 with `closedMessage`), `archived`',
});
const json = (fallback: unknown) => (v: unknown) => parseJson(v, fallback);
const bool = (column: string, description: string, insertDefault: boolean) =>
  ({ column, schema: Type.Boolean(), input: Type.Boolean({ description }), read: Boolean, insertDefault }) as const;

const FieldDefinition = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      '`{ name, type, label?, required?, placeholder?, helpText?, options?, defaultValue?, validation?, condition? }` (the `FormField` schema); types: text, email, tel, textarea, select, checkbox, radio, date, datetime, time, number, file, rating, hidden (decisions F4). Problems are a 422 `SCHEMA_INVALID` with paths like `schema[2].options[0]`',
  },
);

/** A stored field definition, every key named (decisions F4), for the OpenAPI document and clients. */
const FormFieldSchema = named(
  'FormField',
  Type.Object({
    name: Type.String({ description: 'Starts with a letter; letters, digits, `_`, `-`; unique in the form' }),
    type: Type.Unsafe<string>({ type: 'string', enum: [...FORM_FIELD_TYPES] }),
    label: Type.Optional(Type.String({ maxLength: 255 })),
    required: Type.Optional(Type.Boolean()),
    placeholder: Type.Optional(Type.String({ maxLength: 255 })),
    helpText: Type.Optional(Type.String({ maxLength: 1000 })),
    options: Type.Optional(
      Type.Array(Type.Object({ value: Type.String(), label: Type.Optional(Type.String()) }), {
        description: 'select, radio, checkbox (a checkbox without options is one yes/no box)',
      }),
    ),
    defaultValue: Type.Optional(Type.String({ description: "A hidden field's value when none is sent" })),
    validation: Type.Optional(
      Type.Object({
        minLength: Type.Optional(Type.Integer()),
        maxLength: Type.Optional(Type.Integer()),
        min: Type.Optional(Type.Number()),
        max: Type.Optional(Type.Number({ description: 'For rating: the top of the scale, 1-5' })),
        pattern: Type.Optional(Type.String({ description: 'RE2, for text-like fields' })),
        accept: Type.Optional(Type.Array(Type.String(), { description: 'File fields: media types, `image/*` for any image' })),
        maxSizeMb: Type.Optional(Type.Number({ description: 'File fields: at most 10 (default 5)' })),
      }),
    ),
    condition: Type.Optional(
      Type.Object(
        {
          field: Type.String(),
          operator: Type.Unsafe<string>({ type: 'string', enum: ['equals', 'notEquals', 'contains', 'isEmpty', 'isNotEmpty'] }),
          value: Type.Optional(Type.String()),
        },
        { description: 'Show (and require) the field only when another field matches' },
      ),
    ),
  }),
);
export const FormSchemaInput = Type.Union([Type.Array(FieldDefinition), Type.Object({ fields: Type.Array(FieldDefinition) })], {
  description: 'The form fields (at most 100): `[...]` or `{ fields: [...] }`',
});
const Email = Type.String({ format: 'email', maxLength: 254 });

export const FormSettingsSchema = Type.Object(
  {
    honeypotField: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z_][A-Za-z0-9_-]{0,99}$',
        description: 'The hidden field bots fill (default `_gotcha`); a submission that fills it is stored as spam',
      }),
    ),
    minFillSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 3600,
        description: 'A submission sooner than this after the form was fetched (its `fillToken`) is stored as spam (default 0: off)',
      }),
    ),
    pages: Type.Optional(
      Type.Array(
        Type.Object({ title: Type.Optional(Type.String({ maxLength: 255 })), fields: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 }) }),
        {
          maxItems: MAX_PAGES,
          description: 'A multi-page layout: the fields of each page, in order',
        },
      ),
    ),
  },
  { additionalProperties: false, description: 'Form settings (decisions F5)' },
);
export const FormNotificationsSchema = Type.Object(
  {
    enabled: Type.Optional(
      Type.Boolean({ description: "E-mail each accepted submission (default true; the site's `formSubmission` preference must be on too)" }),
    ),
    recipientEmails: Type.Optional(
      Type.Array(Email, { maxItems: 20, uniqueItems: true, description: "This form's recipients instead of the site's `recipientEmails`" }),
    ),
    subject: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false, description: 'Notification settings of the form (decisions F5)' },
);

/** Spec "Form" (decisions F1-F5, G10): one field map for the API shape, the bodies and the rows. */
export const formFields = fieldMap({
  id: common.id,
  name: { column: 'name', schema: Type.String(), input: Type.String({ minLength: 1, maxLength: 255 }), create: 'required', translated: true },
  slug: {
    column: 'slug',
    schema: Type.String(),
    input: Type.String({ minLength: 1, maxLength: 255, pattern: SLUG_PATTERN, description: 'Generated from the name when omitted' }),
  },
  description: { column: 'description', schema: Nullable(Type.String()), input: Nullable(Type.String({ maxLength: 1000 })), translated: true },
  status: { column: 'status', schema: Status, input: Status, insertDefault: 'draft' },
  locale: common.locale,
  translationGroup: common.translationGroup,
  submissionCount: { column: 'submission_count', schema: Type.Integer({ description: 'Stored submissions that are not spam' }), read: Number },
  schema: {
    column: 'schema',
    schema: Type.Array(ref(FormFieldSchema)),
    input: FormSchemaInput,
    create: 'required',
    read: json([]),
    write: toJson,
    summary: false,
  },
  settings: { column: 'settings', schema: FormSettingsSchema, input: FormSettingsSchema, read: json({}), write: toJson, insertDefault: '{}', summary: false },
  notifications: {
    column: 'notifications',
    schema: FormNotificationsSchema,
    input: FormNotificationsSchema,
    read: json({}),
    write: toJson,
    insertDefault: '{}',
    summary: false,
  },
  honeypotEnabled: bool('honeypot_enabled', 'Check the honeypot field (default true)', true),
  captchaEnabled: bool('captcha_enabled', "Require the site's captcha (spam settings) on submissions (default false)", false),
  successMessage: { column: 'success_message', schema: Nullable(Type.String()), input: Nullable(Type.String({ maxLength: 1000 })), translated: true },
  redirectUrl: {
    column: 'redirect_url',
    schema: Nullable(Type.String()),
    input: Nullable(UrlOrPath({ description: 'Where an HTML form post is sent after a submission (303)' })),
  },
  submitLabel: {
    column: 'submit_label',
    schema: Nullable(Type.String()),
    input: Nullable(Type.String({ maxLength: 255, description: 'The submit button text' })),
    translated: true,
  },
  closedMessage: {
    column: 'closed_message',
    schema: Nullable(Type.String()),
    input: Nullable(Type.String({ maxLength: 255, description: 'What a closed form answers (409)' })),
    translated: true,
  },
  createdAt: common.createdAt,
  updatedAt: common.updatedAt,
});

/** The schema as the API sent it, checked and normalised (422 SCHEMA_INVALID with paths like `schema[2].options[0]`). */
export function formSchemaOf(input: unknown): FormField[] {
  const parsed = parseFormSchema(input);
  if (!parsed.ok) throw issuesError('SCHEMA_INVALID', parsed.issues);
  return parsed.fields;
}

function checkSettings(settings: FormSettings, fields: FormField[]) {
  const issues = checkFormSettings(settings, fields);
  if (issues.length) throw issuesError('VALIDATION_FAILED', issues);
}

export const forms = translatableResource({
  table: 'forms',
  noun: 'form',
  name: 'Form',
  plural: 'Forms',
  path: '/forms',
  scope: 'forms',
  fields: formFields,
  examples: {
    record: {
      id: 5,
      name: 'Contact',
      slug: 'contact',
      description: 'The contact form of the footer',
      status: 'active',
      locale: 'en',
      translationGroup: '9a4f2c61-7e3b-4d18-b5c0-2e8f6a1d3b97',
      submissionCount: 31,
      schema: [
        { name: 'name', type: 'text', label: 'Your name', required: true, validation: { maxLength: 100 } },
        { name: 'email', type: 'email', label: 'E-mail', required: true },
        {
          name: 'topic',
          type: 'select',
          label: 'Topic',
          options: [
            { value: 'sales', label: 'Sales' },
            { value: 'support', label: 'Support' },
          ],
        },
        { name: 'message', type: 'textarea', label: 'Message', required: true, validation: { minLength: 10, maxLength: 5000 } },
      ],
      settings: { honeypotField: 'website', minFillSeconds: 3 },
      notifications: { enabled: true, recipientEmails: ['team@example.com'], subject: 'New message from the website' },
      honeypotEnabled: true,
      captchaEnabled: false,
      successMessage: 'Thank you, we will answer within two days.',
      redirectUrl: null,
      submitLabel: 'Send',
      closedMessage: null,
      createdAt: '2026-02-14T10:00:00.000Z',
      updatedAt: '2026-02-20T16:45:12.000Z',
    },
    create: {
      name: 'Contact',
      status: 'active',
      schema: [
        { name: 'name', type: 'text', label: 'Your name', required: true },
        { name: 'email', type: 'email', label: 'E-mail', required: true },
        { name: 'message', type: 'textarea', label: 'Message', required: true, validation: { minLength: 10 } },
      ],
      notifications: { enabled: true, recipientEmails: ['team@example.com'] },
      successMessage: 'Thank you, we will answer within two days.',
    },
  },
  list: {
    sort: ['created_at', 'updated_at', 'name'],
    search: ['name', 'slug', 'description'],
    common: ['search', 'slug', 'slugs', 'ids', 'excludeIds', 'locale', 'translationGroup'],
    filters: { status: Type.Optional(Status) },
    apply: (qb, query: { status?: string }) => (query.status ? qb.where('status', '=', query.status) : qb),
  },
  unique: [{ field: 'slug', code: 'SLUG_TAKEN', onCopy: 'free-slug' }],
  slugFrom: { field: 'name', fallback: 'form' },
  delivery: { column: 'status', value: 'active' },
  rules: {
    create(_tx, { input, row }) {
      const fields = formSchemaOf(input.schema);
      checkSettings((input.settings ?? {}) as FormSettings, fields);
      row.schema = toJson(fields);
    },
    update(_tx, { current, input, patch }) {
      const fields = input.schema !== undefined ? formSchemaOf(input.schema) : (parseJson(current.schema, []) as FormField[]);
      if (input.schema !== undefined) patch.schema = toJson(fields);
      if (input.schema !== undefined || input.settings !== undefined)
        checkSettings((input.settings ?? parseJson(current.settings, {})) as FormSettings, fields);
    },
    copy(_tx, { row }) {
      // The copy is a draft with the same fields (labels, placeholders and option labels copied) and no submissions.
      row.status = 'draft';
    },
  },
  docs: {
    list: { summary: 'List forms with submissionCount', description: 'Delivery tokens see active forms only.' },
    update: { summary: 'Update a form (partial); submissions are kept' },
    delete: { summary: 'Delete a form with all its submissions' },
    copyToLocale: { summary: 'Copy into another locale as a draft (fields, labels, placeholders and option labels copied)' },
  },
});
