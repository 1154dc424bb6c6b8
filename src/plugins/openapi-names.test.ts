import { describe, expect, it } from 'vitest';
import { type NamedDocument, nameSchemas } from './openapi-names.js';

const json = (schema: Record<string, unknown>) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const record = (title?: string) => ({ type: 'object', properties: { data: ref('Tag') }, ...(title ? { title } : {}) });

describe('nameSchemas', () => {
  it('names a body and the 2xx answers after the operationId, the first answer without its status', () => {
    const doc = nameSchemas<NamedDocument>({
      paths: {
        '/v1/tags': {
          post: {
            operationId: 'createTag',
            requestBody: json({ type: 'object', properties: { name: { type: 'string' } } }),
            responses: {
              201: json({ type: 'object', properties: { id: { type: 'integer' } } }),
              202: json({ type: 'array', items: {} }),
              422: json(ref('Error')),
            },
          },
        },
      },
    });
    const op = doc.paths!['/v1/tags']!.post!;
    expect(op.requestBody!.content!['application/json']!.schema).toEqual(ref('CreateTagRequest'));
    expect(op.responses!['201']!.content!['application/json']!.schema).toEqual(ref('CreateTagResponse'));
    expect(op.responses!['202']!.content!['application/json']!.schema).toEqual(ref('CreateTagResponse202'));
    // Errors are not answers of the route's own; they keep the Error reference they had.
    expect(op.responses!['422']!.content!['application/json']!.schema).toEqual(ref('Error'));
    expect(doc.components!.schemas!.CreateTagRequest).toEqual({ type: 'object', properties: { name: { type: 'string' } }, title: 'CreateTagRequest' });
    expect(Object.keys(doc.components!.schemas!).sort()).toEqual(['CreateTagRequest', 'CreateTagResponse', 'CreateTagResponse202']);
  });

  it('gives routes answering one titled shape one component, and refuses two shapes under one title', () => {
    const doc = nameSchemas<NamedDocument>({
      paths: {
        '/v1/tags/{id}': {
          get: { operationId: 'getTag', responses: { 200: json(record('TagResponse')) } },
          put: { operationId: 'updateTag', responses: { 200: json(record('TagResponse')) } },
        },
      },
    });
    expect(doc.paths!['/v1/tags/{id}']!.put!.responses!['200']!.content!['application/json']!.schema).toEqual(ref('TagResponse'));
    expect(Object.keys(doc.components!.schemas!)).toEqual(['TagResponse']);

    const clash = { type: 'object', properties: { data: ref('Category') }, title: 'TagResponse' };
    expect(() =>
      nameSchemas<NamedDocument>({
        paths: {
          '/v1/a': { get: { operationId: 'getA', responses: { 200: json(record('TagResponse')) } } },
          '/v1/b': { get: { operationId: 'getB', responses: { 200: json(clash) } } },
        },
      }),
    ).toThrow('GET /v1/b 200 answer application/json: another schema is already named TagResponse');
  });

  it('leaves text and file answers, references and routes without an operationId as they are', () => {
    const file = { type: 'string', format: 'binary' };
    const inline = { type: 'object', properties: { ok: { type: 'boolean' } } };
    const doc = nameSchemas<NamedDocument>({
      paths: {
        '/files/{id}': { get: { operationId: 'getFile', responses: { 200: json(file) } } },
        '/v1/site': { get: { operationId: 'getSite', responses: { 200: json(ref('Site')) } } },
        '/v1/anonymous': { post: { requestBody: json(inline), responses: { 200: json(inline) } } },
      },
    });
    expect(doc.paths!['/files/{id}']!.get!.responses!['200']!.content!['application/json']!.schema).toEqual(file);
    expect(doc.paths!['/v1/site']!.get!.responses!['200']!.content!['application/json']!.schema).toEqual(ref('Site'));
    expect(doc.paths!['/v1/anonymous']!.post!.requestBody!.content!['application/json']!.schema).toEqual(inline);
    expect(doc.components!.schemas).toEqual({});
  });

  it('names a second content type with another schema by its media type, and one schema under two types once', () => {
    const form = { type: 'object', properties: { file: { type: 'string', format: 'binary' } } };
    const body = { type: 'object', properties: { url: { type: 'string' } } };
    const doc = nameSchemas<NamedDocument>({
      paths: {
        '/v1/upload': {
          post: {
            operationId: 'upload',
            requestBody: { content: { 'application/json': { schema: body }, 'multipart/form-data': { schema: form } } },
            responses: {},
          },
        },
        '/v1/import': {
          post: { operationId: 'import', requestBody: { content: { 'application/json': { schema: body }, 'text/plain': { schema: body } } }, responses: {} },
        },
      },
    });
    expect(doc.paths!['/v1/upload']!.post!.requestBody!.content!['multipart/form-data']!.schema).toEqual(ref('UploadRequestMultipartFormData'));
    expect(doc.paths!['/v1/import']!.post!.requestBody!.content!['text/plain']!.schema).toEqual(ref('ImportRequest'));
    expect(Object.keys(doc.components!.schemas!).sort()).toEqual(['ImportRequest', 'UploadRequest', 'UploadRequestMultipartFormData']);
  });

  it("keeps a schema's examples, which @fastify/swagger moved to the media type, on the component too", () => {
    const doc = nameSchemas<NamedDocument>({
      paths: {
        '/v1/tags': {
          post: {
            operationId: 'createTag',
            requestBody: {
              content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } }, example: { name: 'Hiking' } } },
            },
            responses: {
              201: {
                content: {
                  'application/json': { schema: record(), examples: { example1: { value: { data: {} } }, example2: { value: { data: { id: 1 } } } } },
                },
              },
            },
          },
        },
      },
    });
    expect(doc.components!.schemas!.CreateTagRequest!.examples).toEqual([{ name: 'Hiking' }]);
    expect(doc.components!.schemas!.CreateTagResponse!.examples).toEqual([{ data: {} }, { data: { id: 1 } }]);
    expect(doc.paths!['/v1/tags']!.post!.requestBody!.content!['application/json']!.example).toEqual({ name: 'Hiking' });
  });

  it('does not change the route schemas it names (Fastify still validates and serializes with them)', () => {
    const body = { type: 'object', properties: { name: { type: 'string' } } };
    nameSchemas<NamedDocument>({ paths: { '/v1/x': { post: { operationId: 'createX', requestBody: json(body), responses: {} } } } });
    expect(body).toEqual({ type: 'object', properties: { name: { type: 'string' } } });
  });
});
