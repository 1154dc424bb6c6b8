import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { buildSerializer } from '../plugins/serialization.js';
import { named, ref } from './schemas.js';
import {
  STORED_JSON_KEYWORD,
  StoredJson,
  serializableSchema,
  storedJson,
  storedJsonSchemaIds,
  unwrapStoredJson,
  withoutStoredJsonKeyword,
} from './stored-json.js';

/** Decisions PF13: stored JSON text written into answers as it is. */
const Ref = Type.Object({ id: Type.Integer(), name: Type.String() });
const Item = Type.Object({
  title: Type.String(),
  links: StoredJson(Type.Array(Ref)),
  extra: Type.Optional(StoredJson(Type.Object({}, { additionalProperties: true }))),
});

describe('stored JSON (decisions PF13)', () => {
  it('writes each stored text in place of its quoted value, and leaves everything else as it was', () => {
    const links = '[{"id":1,"name":"Q \\"uoted\\" \\u0001 ünïcödé \\n"},{"id":2,"name":"b"}]';
    const serialize = buildSerializer({})({ schema: Type.Object({ data: Type.Array(Item) }) });
    const json = serialize({
      data: [
        { title: 'a "title" with \u0001 and \u0002 in it', links: storedJson(links), extra: storedJson('{"k":[1,{"x":null}]}') },
        { title: '', links: storedJson('[]') },
      ],
    });
    expect(json).toBe(
      `{"data":[{"title":"a \\"title\\" with \\u0001 and \\u0002 in it","links":${links},"extra":{"k":[1,{"x":null}]}},{"title":"","links":[]}]}`,
    );
    expect(JSON.parse(json).data[0].links[0].name).toBe('Q "uoted" \u0001 ünïcödé \n');
  });

  it('unwraps through a shared schema a route refers to, and only in the routes that refer to one', () => {
    const summary = named('StoredJsonTestSummary', Item);
    const shared = { StoredJsonTestSummary: summary, Plain: { $id: 'Plain', type: 'object', properties: { s: { type: 'string' } } } };
    const build = buildSerializer(shared);
    const page = build({ schema: Type.Object({ data: Type.Array(ref(summary)) }) });
    expect(page({ data: [{ title: 't', links: storedJson('[{"id":7,"name":"n"}]') }] })).toBe('{"data":[{"title":"t","links":[{"id":7,"name":"n"}]}]}');
    // A route without stored JSON keeps fast-json-stringify's answer as it is (a string that holds a wrapped text is escaped).
    const plain = build({ schema: { $ref: 'Plain#' } });
    expect(plain({ s: storedJson('[1]') })).toBe('{"s":"\\u0001[1]\\u0002"}');
  });

  it('finds the shared schemas holding stored JSON, themselves or through another', () => {
    const schemas = {
      A: { $id: 'A', type: 'object', properties: { x: StoredJson(Type.Array(Type.Integer())) } },
      B: { $id: 'B', type: 'array', items: { $ref: 'A#' } },
      C: { $id: 'C', type: 'object', properties: { b: { $ref: 'B#' } } },
      D: { $id: 'D', type: 'object', properties: { s: { type: 'string' } } },
    };
    expect([...storedJsonSchemaIds(schemas)].sort()).toEqual(['A', 'B', 'C']);
  });

  it('compiles a stored node as an unescaped string and documents it as what it holds, copying only what changes', () => {
    const schema = Type.Object({ title: Type.String(), links: StoredJson(Type.Array(Ref)) });
    const compiled = serializableSchema(schema) as any;
    expect(compiled.properties.links).toEqual({ type: 'string', format: 'unsafe' });
    expect(compiled.properties.title).toBe(schema.properties.title);
    expect((schema.properties.links as any)[STORED_JSON_KEYWORD]).toBe(true);
    const documented = withoutStoredJsonKeyword(schema) as any;
    expect(documented.properties.links).toEqual({ type: 'array', items: Ref });
    expect((schema.properties.links as any)[STORED_JSON_KEYWORD]).toBe(true);
    expect(serializableSchema(Ref)).toBe(Ref);
    expect(withoutStoredJsonKeyword(Ref)).toBe(Ref);
  });

  it('unwraps texts at either end and side by side', () => {
    expect(unwrapStoredJson(`"${storedJson('[1]')}"`)).toBe('[1]');
    expect(unwrapStoredJson(`["${storedJson('{}')}","${storedJson('[]')}"]`)).toBe('[{},[]]');
    expect(unwrapStoredJson('{"a":"b"}')).toBe('{"a":"b"}');
  });
});
