import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORMATS } from '../../src/shared/formats.js';
import { STORED_JSON_KEYWORD } from '../../src/shared/stored-json.js';
import { buildTestApp, type TestContext } from '../helpers/app.js';

/**
 * Issue 38, decisions TCL5: every request body and every 2xx JSON answer of the OpenAPI document
 * is a named component (a generated client gets a type name for each), and the main schemas carry
 * examples that are valid against them. Routes added later are covered by the same walk.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const COMPONENTS = '#/components/schemas/';

let ctx: TestContext;
let doc: any;

beforeAll(async () => {
  ctx = await buildTestApp();
  const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
}, 120_000); // the document of every route is built once here, slow on a busy machine
afterAll(() => ctx.close());

const schemaAt = (path: string, method: string, where: 'body' | number) => {
  const op = doc.paths[path][method];
  const content = where === 'body' ? op.requestBody.content : op.responses[where].content;
  return content['application/json'].schema;
};

describe('OpenAPI: named request and answer schemas', () => {
  it('names the request body and every 2xx JSON answer of every route', () => {
    const problems: string[] = [];
    let named = 0;
    const check = (schema: any, at: string, what: string, operationId: string | undefined) => {
      if (!schema || schema.type === 'string') return; // text or a file (CSV, scripts, images): no JSON record to name
      if (schema.$ref?.startsWith(COMPONENTS) && doc.components.schemas[schema.$ref.slice(COMPONENTS.length)]) {
        named++;
        return;
      }
      problems.push(
        operationId
          ? `${at}: the ${what} is not a component named after operationId ${operationId} (see src/plugins/openapi-names.ts)`
          : `${at}: the ${what} is inline because the route has no operationId. Add \`operationId\` to its schema (verb first, camelCase: \`createBookmark\`, \`listBookmarks\`): the document then names the body \`<OperationId>Request\` and the answer \`<OperationId>Response\`; or give a shape several routes share a \`title\` (as Data(ref(X)) = XResponse, Paginated(ref(X)) = XPage) or use named()/ref() from src/shared/schemas.ts.`,
      );
    };
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(operations)) {
        const at = `${method.toUpperCase()} ${path}`;
        for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) check(media.schema, at, `request body (${type})`, op.operationId);
        for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
          if (!/^2\d\d$/.test(status)) continue;
          for (const [type, media] of Object.entries<any>(response.content ?? {})) check(media.schema, at, `${status} answer (${type})`, op.operationId);
        }
      }
    }
    expect(problems).toEqual([]);
    // The walk saw the document's bodies and answers (about 270 today), not an empty document.
    expect(named).toBeGreaterThan(250);
  });

  it('gives stable, readable names: shared shapes once, the rest after their route', () => {
    const name = (schema: any) => schema.$ref.slice(COMPONENTS.length);
    expect(name(schemaAt('/v1/tags', 'post', 'body'))).toBe('CreateTagRequest');
    expect(name(schemaAt('/v1/tags', 'post', 201))).toBe('TagResponse');
    expect(name(schemaAt('/v1/tags/{id}', 'get', 200))).toBe('TagResponse');
    expect(name(schemaAt('/v1/tags/{id}', 'put', 'body'))).toBe('UpdateTagRequest');
    expect(name(schemaAt('/v1/tags', 'get', 200))).toBe('TagPage');
    expect(name(schemaAt('/v1/tags/{id}', 'delete', 200))).toBe('Message');
    expect(name(schemaAt('/v1/tags/{id}/copy-to-locale', 'post', 'body'))).toBe('CopyToLocaleRequest');
    expect(name(schemaAt('/v1/contents/{id}/copy-to-locale', 'post', 'body'))).toBe('CopyToLocaleRequest');
    expect(name(schemaAt('/v1/contents', 'post', 'body'))).toBe('CreateContentRequest');
    expect(name(schemaAt('/v1/contents', 'get', 200))).toBe('ContentSummaryPage');
    expect(name(schemaAt('/v1/public/forms/{slug}/submissions', 'post', 'body'))).toBe('SubmitFormRequest');
    expect(name(schemaAt('/v1/public/forms/{slug}/submissions', 'post', 201))).toBe('SubmitFormResponse');
    expect(name(schemaAt('/v1/analytics/settings', 'put', 'body'))).toBe('UpdateAnalyticsSettingsRequest');
    expect(name(schemaAt('/v1/public/analytics/events', 'post', 202))).toBe('CollectAnalyticsEventsResponse');

    const { TagResponse, TagPage, Message } = doc.components.schemas;
    expect(TagResponse).toMatchObject({ title: 'TagResponse', required: ['data'], properties: { data: { $ref: `${COMPONENTS}Tag` } } });
    expect(TagPage).toMatchObject({ properties: { data: { items: { $ref: `${COMPONENTS}Tag` } }, meta: { $ref: `${COMPONENTS}PageMeta` } } });
    expect(Message).toMatchObject({ properties: { message: { type: 'string' } } });
    // One component per shape: every route answering { data: Tag } refers to the same one.
    const tagAnswers = Object.values<any>(doc.paths).flatMap((ops) =>
      Object.values<any>(ops).flatMap((op) => Object.values<any>(op.responses).map((r) => r.content?.['application/json']?.schema?.$ref)),
    );
    expect(tagAnswers.filter((r) => r === `${COMPONENTS}TagResponse`)).toHaveLength(4); // create, get, update, copy-to-locale
  });
});

describe('OpenAPI: examples on the main schemas', () => {
  const MAIN = [
    'Error',
    'Content',
    'ContentSummary',
    'CreateContentRequest',
    'SiteBlock',
    'SiteBlockSummary',
    'Category',
    'CreateCategoryRequest',
    'Tag',
    'CreateTagRequest',
    'MediaFile',
    'MediaFileDetail',
    'Form',
    'CreateFormRequest',
    'FormSubmission',
    'SubmitFormRequest',
    'Redirect',
    'CreateRedirectRequest',
    'User',
    'CreateUserRequest',
    'ApiToken',
    'ApiTokenWithValue',
    'CreateApiTokenRequest',
    'AnalyticsSettings',
    'UpdateAnalyticsSettingsRequest',
  ];

  it('documents stored JSON as the value it holds, without the serializer keyword (decisions PF13)', () => {
    const ref = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' }, slug: { type: 'string' } } };
    for (const name of ['ContentSummary', 'Content', 'ContentSearchResult']) {
      expect(doc.components.schemas[name].properties.categories).toMatchObject({ type: 'array', items: ref });
      expect(doc.components.schemas[name].properties.tags).toMatchObject({ type: 'array', items: ref });
    }
    expect(JSON.stringify(doc)).not.toContain(STORED_JSON_KEYWORD);
  });

  it('has examples on each main schema', () => {
    const missing = MAIN.filter((name) => !(doc.components.schemas[name]?.examples?.length > 0));
    expect(missing).toEqual([]);
  });

  it('has only examples that are valid against their schema, with no property the schema lacks', () => {
    // Every object that lists its properties is closed for this check, so a misspelt or stale key
    // in an example fails here instead of showing in /docs.
    const closed = (schema: any): any => {
      if (Array.isArray(schema)) return schema.map(closed);
      if (!schema || typeof schema !== 'object') return schema;
      const out: any = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'examples' ? v : closed(v)]));
      if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
      return out;
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const [format, validate] of Object.entries(FORMATS)) ajv.addFormat(format, { type: 'string', validate });
    ajv.addSchema({ $id: 'cairn-openapi', components: closed(doc.components) });
    const wrong: string[] = [];
    let checked = 0;
    for (const [name, schema] of Object.entries<any>(doc.components.schemas)) {
      for (const [i, example] of (schema.examples ?? []).entries()) {
        const validate = ajv.compile({ $ref: `cairn-openapi${COMPONENTS}${name}` });
        checked++;
        if (!validate(example)) wrong.push(`${name}.examples[${i}]: ${ajv.errorsText(validate.errors)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(MAIN.length);
  });

  it('catches an example that does not fit its schema (the check above can fail)', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    const tag = { ...doc.components.schemas.Tag, additionalProperties: false };
    const example = tag.examples[0];
    expect(ajv.validate(tag, example)).toBe(true);
    expect(ajv.validate(tag, { ...example, contentCount: '12' })).toBe(false);
    expect(ajv.validate(tag, { ...example, colour: 'red' })).toBe(false);
  });

  it('shows them in /docs: the reference UI serves the same document, examples and names included', async () => {
    const page = await ctx.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const served = await ctx.app.inject({ method: 'GET', url: '/docs/json' });
    expect(served.statusCode).toBe(200);
    const docs = served.json();
    expect(docs.components.schemas.Tag.examples[0]).toMatchObject({ name: 'Hiking', slug: 'hiking' });
    expect(docs.components.schemas.CreateTagRequest.examples[0]).toEqual({ name: 'Hiking', description: 'Trails, huts and the gear to get there' });
    // Swagger UI fills "Try it out" from the media type's example, which @fastify/swagger takes from the schema's.
    const body = docs.paths['/v1/tags'].post.requestBody.content['application/json'];
    expect(body).toEqual({
      schema: { $ref: `${COMPONENTS}CreateTagRequest` },
      example: { name: 'Hiking', description: 'Trails, huts and the gear to get there' },
    });
  });
});
