import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Two validators: query strings, path parameters and headers arrive as text and are coerced
 * (`?limit=20` is a number, `?ids=1` a one-item array); JSON bodies are not coerced, so a
 * wrong type is a 422 and `null` stays null instead of becoming "" (decisions G3, G7).
 * Unknown body fields are dropped where a schema closes an object; services pick known fields.
 */
export function registerValidation(app: FastifyInstance): void {
  const common: Options = { allErrors: true, removeAdditional: true, useDefaults: true, strict: false };
  const text = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
  const json = addFormats(new Ajv({ ...common, coerceTypes: false }));
  app.setValidatorCompiler(({ schema, httpPart }: { schema: FastifySchema; httpPart?: string }) =>
    (httpPart === 'body' ? json : text).compile(schema as object),
  );
}
