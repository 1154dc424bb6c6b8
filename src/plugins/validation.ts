import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { FORMATS } from '../shared/formats.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type CompileInput = { schema: object; httpPart?: string };

const common: Options = { allErrors: true, removeAdditional: true, useDefaults: true, strict: false };
let shared: { text: Ajv; json: Ajv } | null = null;

/**
 * Two validators: query strings, path parameters and headers arrive as text and are coerced
 * (`?limit=20` is a number, `?ids=1` a one-item array); JSON bodies are not coerced, so a
 * wrong type is a 422 and `null` stays null instead of becoming "" (decisions G3, G7).
 * Installed as Fastify's compilers factory, so every plugin context uses it, including those
 * that add shared schemas of their own (setValidatorCompiler would not reach those).
 * One pair of Ajv instances serves every context: building one compiles Ajv's meta-schema,
 * which cost about 1 s of start-up when each context had its own.
 */
/** ajv-formats (date-time, uri, uuid, email: full mode, real dates) and Cairn's own (shared/formats.ts). */
function withFormats(ajv: Ajv): Ajv {
  addFormats(ajv);
  for (const [name, validate] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate });
  return ajv;
}

export function buildValidator(externalSchemas: Record<string, unknown>) {
  shared ??= {
    text: withFormats(new Ajv({ ...common, coerceTypes: 'array' })),
    json: withFormats(new Ajv({ ...common, coerceTypes: false })),
  };
  const { text, json } = shared;
  for (const schema of Object.values(externalSchemas)) {
    const id = (schema as { $id?: string }).$id;
    // Asked by its key, not with getSchema (which compiles the schema it finds).
    for (const ajv of [text, json]) if (!id || !(id.replace(/#$/, '') in ajv.schemas)) ajv.addSchema(schema as object);
  }
  return ({ schema, httpPart }: CompileInput) => compileOnFirstUse(() => (httpPart === 'body' ? json : text).compile(schema));
}

type Validate = ((data: unknown) => unknown) & { errors?: unknown };

/**
 * A route's validator compiles when its first request arrives, not at start-up (issue 37 item 5:
 * compiling every route's validators and serializers was most of a 4-6 s start). Fastify reads
 * `errors` from the function it was given after a failed call, so the compiled one's are copied.
 */
function compileOnFirstUse(compile: () => Validate): Validate {
  let compiled: Validate | undefined;
  const validate: Validate = (data) => {
    compiled ??= compile();
    const result = compiled(data);
    validate.errors = compiled.errors;
    return result;
  };
  return validate;
}

/**
 * A validator outside a route's schema (rows of an import): `json` for values as sent, `text` for
 * text coerced like a query string (`"301"` is 301, `"true"` is true). Same formats and rules.
 */
export function compileSchema(schema: object, input: 'json' | 'text') {
  buildValidator({});
  return (input === 'json' ? shared!.json : shared!.text).compile(schema);
}
