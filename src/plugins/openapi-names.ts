/**
 * Every request body and every 2xx answer of the OpenAPI document is a named component schema
 * (decisions TCL5), so a generated client has a type name for each (`components['schemas']['CreateTagRequest']`)
 * and /docs lists them under Schemas. Routes keep their schemas inline for Fastify (validation and
 * the compiled serializers are unchanged); the document is rewritten once, when it is built:
 *
 * - a schema with a `title` is named by it: the shared shapes carry one (`Data(ref(Tag))` is
 *   `TagResponse`, `Paginated(ref(Tag))` is `TagPage`, `Message`, `CopyToLocaleRequest`), and
 *   the routes that answer the same shape share one component;
 * - any other is named after the route's operationId: `<OperationId>Request` for the body,
 *   `<OperationId>Response` for the first 2xx answer (`<OperationId>Response<status>` for another).
 *
 * A route without an operationId keeps its schemas inline, and test/contract/openapi-names.test.ts
 * says what to add. Answers that are text or a file (`type: string`: CSV, scripts, images) are not
 * JSON records and stay as they are.
 */

type Schema = Record<string, unknown> & { $ref?: string; title?: string; type?: unknown };
type Media = Record<string, { schema?: Schema; example?: unknown; examples?: Record<string, { value?: unknown }> }>;
type Operation = {
  operationId?: string;
  requestBody?: { content?: Media };
  responses?: Record<string, { content?: Media }>;
};
export type NamedDocument = { paths?: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };

const COMPONENTS = '#/components/schemas/';
const pascal = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
/** `multipart/form-data` → `MultipartFormData`, for a second content type with another schema. */
const mediaSuffix = (mediaType: string) =>
  mediaType
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map(pascal)
    .join('');

/** A JSON record, list or union (named); a scalar answer (text, a file) is not. */
function isRecordLike(schema: Schema): boolean {
  if (schema.$ref) return false;
  const type = schema.type;
  if (type === 'object' || type === 'array') return true;
  if (type !== undefined) return false;
  return ['properties', 'items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties'].some((k) => k in schema);
}

export function nameSchemas<T extends NamedDocument>(doc: T): T {
  doc.components ??= {};
  const components = (doc.components.schemas ??= {});

  /** The component for `schema`: its title, else the first of `names` free or holding the same schema. */
  const place = (schema: Schema, names: string[], where: string): Schema => {
    const candidates = schema.title ? [schema.title] : names;
    for (const name of candidates) {
      const named = { ...structuredClone(schema), title: name };
      const existing = components[name];
      if (!existing) components[name] = named;
      else if (JSON.stringify(existing) !== JSON.stringify(named)) {
        if (schema.title) throw new Error(`${where}: another schema is already named ${name} (component titles must be unique)`);
        continue;
      }
      return { $ref: `${COMPONENTS}${name}` };
    }
    throw new Error(`${where}: no free component name among ${candidates.join(', ')}`);
  };

  const nameContent = (content: Media | undefined, base: string, where: string) => {
    for (const [mediaType, media] of Object.entries(content ?? {})) {
      if (!media.schema || !isRecordLike(media.schema)) continue;
      // @fastify/swagger moves an inline schema's `examples` to the media type (where Swagger UI
      // fills "Try it out" from them); the component keeps them too, for /docs' schema view and readers of the document.
      const examples = media.example !== undefined ? [media.example] : media.examples ? Object.values(media.examples).map((e) => e.value) : undefined;
      const schema = examples && !media.schema.examples ? { ...media.schema, examples } : media.schema;
      media.schema = place(schema, [base, `${base}${mediaSuffix(mediaType)}`], `${where} ${mediaType}`);
    }
  };

  for (const [path, operations] of Object.entries(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!operation.operationId) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const id = pascal(operation.operationId);
      nameContent(operation.requestBody?.content, `${id}Request`, `${where} request body`);
      const successes = Object.keys(operation.responses ?? {})
        .filter((status) => /^2\d\d$/.test(status))
        .sort();
      successes.forEach((status, i) => {
        nameContent(operation.responses![status]!.content, i === 0 ? `${id}Response` : `${id}Response${status}`, `${where} ${status} answer`);
      });
    }
  }
  return doc;
}
