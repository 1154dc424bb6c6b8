import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type CompileInput = { schema: object; httpPart?: string };

/**
 * Two validators: query strings, path parameters and headers arrive as text and are coerced
 * (`?limit=20` is a number, `?ids=1` a one-item array); JSON bodies are not coerced, so a
 * wrong type is a 422 and `null` stays null instead of becoming "" (decisions G3, G7).
 * Installed as Fastify's compilers factory, so every plugin context uses it, including those
 * that add shared schemas of their own (setValidatorCompiler would not reach those).
 */
export function buildValidator(externalSchemas: Record<string, unknown>) {
  const common: Options = { allErrors: true, removeAdditional: true, useDefaults: true, strict: false };
  const text = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
  const json = addFormats(new Ajv({ ...common, coerceTypes: false }));
  for (const schema of Object.values(externalSchemas)) {
    text.addSchema(schema as object);
    json.addSchema(schema as object);
  }
  return ({ schema, httpPart }: CompileInput) => (httpPart === 'body' ? json : text).compile(schema);
}
