import { Type } from 'typebox';
import { Timestamp } from '../../shared/schemas.js';
import type { EventDescriptions } from '../types.js';

/** `data` of form.submitted: the stored submission (not spam) and its form. */
const FormSubmittedEventData = Type.Object(
  {
    formId: Type.Integer(),
    formSlug: Type.String(),
    locale: Type.String({ description: "The form's locale" }),
    submissionId: Type.Integer(),
    data: Type.Object({}, { additionalProperties: true, description: 'The submitted values, keyed by field name, as stored' }),
    createdAt: Timestamp,
  },
  { additionalProperties: true },
);

/** The events of forms, for the webhook catalog. */
export const FORM_EVENTS: Pick<EventDescriptions, 'form.submitted'> = {
  'form.submitted': {
    description: 'A visitor submitted a form (POST /v1/public/forms/:slug/submissions) and it was stored; submissions stored as spam send nothing.',
    data: FormSubmittedEventData,
    example: {
      formId: 3,
      formSlug: 'contact',
      locale: 'en',
      submissionId: 57,
      data: { name: 'Ada', email: 'ada@example.com' },
      createdAt: '2026-11-22T10:00:00.000Z',
    },
  },
};
