import { describe, it, expect } from 'vitest';
import {
  FIELD_TYPES,
  MAX_FIELDS_PER_LEVEL,
  MAX_NESTING_LEVELS,
  effectiveSchema,
  normalizeFieldSchema,
  validateFieldData,
  validateFieldSchema,
  type FieldDefinition,
  type FieldIssue,
} from './index.js';

const paths = (issues: FieldIssue[]): string[] => issues.map((i) => i.path);
const opts = (...values: string[]): Array<{ value: string }> => values.map((value) => ({ value }));

function flatSchema(n: number): FieldDefinition[] {
  return Array.from({ length: n }, (_, i) => ({ name: `f${i}`, type: 'string' as const, label: `Field ${i}` }));
}

/** `levels` levels of fields, nested through object `fields`. The deepest level holds one string field. */
function nestedThroughObjects(levels: number): FieldDefinition[] {
  let fields: FieldDefinition[] = [{ name: 'leaf', type: 'string' }];
  for (let l = levels - 1; l >= 1; l--) fields = [{ name: `o${l}`, type: 'object', fields }];
  return fields;
}

/** `levels` levels of fields, nested through array `items.fields`. */
function nestedThroughArrays(levels: number): FieldDefinition[] {
  let fields: FieldDefinition[] = [{ name: 'leaf', type: 'string' }];
  for (let l = levels - 1; l >= 1; l--) fields = [{ name: `a${l}`, type: 'array', items: { type: 'object', fields } }];
  return fields;
}

describe('constants', () => {
  it('exposes the 17 field types and the limits', () => {
    expect(FIELD_TYPES).toHaveLength(17);
    expect(new Set(FIELD_TYPES).size).toBe(17);
    expect(MAX_FIELDS_PER_LEVEL).toBe(250);
    expect(MAX_NESTING_LEVELS).toBe(5);
  });
});

describe('validateFieldSchema: structure and limits', () => {
  it('accepts an empty top-level schema', () => {
    expect(validateFieldSchema([])).toEqual([]);
  });

  it('accepts only arrays', () => {
    expect(validateFieldSchema({ fields: [{ name: 'a', type: 'string' }] })).toEqual([{ path: 'schema', message: expect.any(String) as string }]);
    expect(paths(validateFieldSchema(null))).toEqual(['schema']);
    expect(paths(validateFieldSchema('x', 'body.schema'))).toEqual(['body.schema']);
  });

  it('accepts 250 fields per level and refuses 251 (issue on the level path)', () => {
    expect(validateFieldSchema(flatSchema(250))).toEqual([]);
    expect(paths(validateFieldSchema(flatSchema(251)))).toEqual(['schema']);

    const nestedOk: FieldDefinition[] = [{ name: 'obj', type: 'object', fields: flatSchema(250) }];
    expect(validateFieldSchema(nestedOk)).toEqual([]);
    const nestedBad: FieldDefinition[] = [{ name: 'obj', type: 'object', fields: flatSchema(251) }];
    expect(paths(validateFieldSchema(nestedBad))).toEqual(['schema[0].fields']);
    const arrBad: FieldDefinition[] = [{ name: 'arr', type: 'array', items: { type: 'object', fields: flatSchema(251) } }];
    expect(paths(validateFieldSchema(arrBad))).toEqual(['schema[0].items.fields']);
  });

  it('accepts 5 nesting levels through object fields and refuses a 6th', () => {
    expect(validateFieldSchema(nestedThroughObjects(5))).toEqual([]);
    expect(paths(validateFieldSchema(nestedThroughObjects(6)))).toEqual(['schema[0].fields[0].fields[0].fields[0].fields[0].fields']);
  });

  it('accepts 5 nesting levels through array items.fields and refuses a 6th', () => {
    expect(validateFieldSchema(nestedThroughArrays(5))).toEqual([]);
    expect(paths(validateFieldSchema(nestedThroughArrays(6)))).toEqual([
      'schema[0].items.fields[0].items.fields[0].items.fields[0].items.fields[0].items.fields',
    ]);
  });

  it('counts mixed object/array nesting', () => {
    const mixed: FieldDefinition[] = [
      {
        name: 'a',
        type: 'object',
        fields: [
          {
            name: 'b',
            type: 'array',
            items: {
              type: 'object',
              fields: [{ name: 'c', type: 'object', fields: [{ name: 'd', type: 'object', fields: [{ name: 'e', type: 'string' }] }] }],
            },
          },
        ],
      },
    ];
    expect(validateFieldSchema(mixed)).toEqual([]);
    const deeper = structuredClone(mixed);
    const levelFour = deeper[0]!.fields![0]!.items!.fields![0]!.fields!;
    levelFour[0] = { name: 'd', type: 'object', fields: [{ name: 'e', type: 'object', fields: [{ name: 'f', type: 'string' }] }] };
    expect(paths(validateFieldSchema(deeper))).toEqual(['schema[0].fields[0].items.fields[0].fields[0].fields[0].fields']);
  });

  it('refuses non-object definitions', () => {
    expect(paths(validateFieldSchema([{ name: 'a', type: 'string' }, 'b', null, []]))).toEqual(['schema[1]', 'schema[2]', 'schema[3]']);
  });

  it('reports every issue, capped at 100', () => {
    const bad = Array.from({ length: 150 }, () => ({ name: 1, type: 'nope' }));
    const issues = validateFieldSchema(bad);
    expect(issues).toHaveLength(100);
    expect(issues[0]).toEqual({ path: 'schema[0].name', message: expect.any(String) as string });
    expect(issues[1]!.path).toBe('schema[0].type');
    expect(issues[99]!.path).toBe('schema[49].type');
  });
});

describe('validateFieldSchema: names, types and common keys', () => {
  it('requires a valid name', () => {
    const schema = [
      { type: 'string' },
      { name: '', type: 'string' },
      { name: 'x'.repeat(101), type: 'string' },
      { name: '1abc', type: 'string' },
      { name: 'has space', type: 'string' },
      { name: 42, type: 'string' },
      { name: '__proto__', type: 'string' },
      { name: 'x'.repeat(100), type: 'string' },
      { name: '_ok-Name_2', type: 'string' },
    ];
    expect(paths(validateFieldSchema(schema))).toEqual([
      'schema[0].name',
      'schema[1].name',
      'schema[2].name',
      'schema[3].name',
      'schema[4].name',
      'schema[5].name',
      'schema[6].name',
    ]);
  });

  it('refuses duplicate names within a level (case-sensitive), allows them across levels', () => {
    const schema = [
      { name: 'title', type: 'string' },
      { name: 'Title', type: 'string' },
      { name: 'title', type: 'text' },
      {
        name: 'obj',
        type: 'object',
        fields: [
          { name: 'title', type: 'string' },
          { name: 'a', type: 'string' },
          { name: 'a', type: 'number' },
        ],
      },
    ];
    expect(paths(validateFieldSchema(schema))).toEqual(['schema[2].name', 'schema[3].fields[2].name']);
  });

  it('requires a known type', () => {
    expect(paths(validateFieldSchema([{ name: 'a' }, { name: 'b', type: 'String' }, { name: 'c', type: 3 }]))).toEqual([
      'schema[0].type',
      'schema[1].type',
      'schema[2].type',
    ]);
  });

  it('checks label, description, required and placeholder', () => {
    const schema = [
      { name: 'a', type: 'string', label: '', description: 'x'.repeat(1001), required: 'yes', placeholder: 'x'.repeat(256) },
      { name: 'b', type: 'string', label: 'x'.repeat(256), description: 3, placeholder: 4 },
      { name: 'c', type: 'string', label: 'x'.repeat(255), description: 'x'.repeat(1000), required: true, placeholder: 'x'.repeat(255) },
    ];
    expect(paths(validateFieldSchema(schema))).toEqual([
      'schema[0].label',
      'schema[0].description',
      'schema[0].placeholder',
      'schema[0].required',
      'schema[1].label',
      'schema[1].description',
      'schema[1].placeholder',
    ]);
  });

  it('keeps unknown extra keys', () => {
    expect(validateFieldSchema([{ name: 'a', type: 'string', width: 'half', ui: { widget: 'x' } }])).toEqual([]);
  });

  it('accepts a valid definition of each of the 17 types', () => {
    const schema = FIELD_TYPES.map((type): Record<string, unknown> => {
      const def: Record<string, unknown> = { name: `f_${type}`, type };
      if (type === 'select' || type === 'multiselect') def.options = ['a', { value: 'b', label: 'B' }];
      if (type === 'object') def.fields = [{ name: 'x', type: 'string' }];
      if (type === 'array') def.items = { type: 'string' };
      if (type === 'dataSource') Object.assign(def, { source: 'contents', limit: 5, filters: { status: 'published' } });
      return def;
    });
    expect(validateFieldSchema(schema)).toEqual([]);
  });
});

describe('validateFieldSchema: type-specific rules', () => {
  it('select/multiselect options', () => {
    const schema = [
      { name: 's0', type: 'select' },
      { name: 's1', type: 'select', options: [] },
      { name: 's2', type: 'multiselect', options: 'a,b' },
      { name: 's3', type: 'select', options: ['a', 'a', { value: 'b' }, { value: 'b', label: 'again' }] },
      { name: 's4', type: 'select', options: [{ label: 'no value' }, { value: '' }, { value: 7 }, 5, '', { value: 'x', label: 'y'.repeat(256) }] },
      { name: 's5', type: 'select', options: Array.from({ length: 501 }, (_, i) => `o${i}`) },
      { name: 's6', type: 'multiselect', options: Array.from({ length: 500 }, (_, i) => ({ value: `o${i}` })) },
      { name: 's7', type: 'select', options: [{ value: 'x'.repeat(256) }] },
    ];
    expect(paths(validateFieldSchema(schema))).toEqual([
      'schema[0].options',
      'schema[1].options',
      'schema[2].options',
      'schema[3].options[1]',
      'schema[3].options[3].value',
      'schema[4].options[0].value',
      'schema[4].options[1].value',
      'schema[4].options[2].value',
      'schema[4].options[3]',
      'schema[4].options[4]',
      'schema[4].options[5].label',
      'schema[5].options',
      'schema[7].options[0].value',
    ]);
  });

  it('object needs at least one field', () => {
    const schema = [
      { name: 'o0', type: 'object' },
      { name: 'o1', type: 'object', fields: [] },
      { name: 'o2', type: 'object', fields: { a: { type: 'string' } } },
      { name: 'o3', type: 'object', fields: [{ name: 'bad', type: 'nope' }] },
    ];
    expect(paths(validateFieldSchema(schema))).toEqual(['schema[0].fields', 'schema[1].fields', 'schema[2].fields', 'schema[3].fields[0].type']);
  });

  it('array needs valid items', () => {
    const schema = [
      { name: 'a0', type: 'array' },
      { name: 'a1', type: 'array', items: 'string' },
      { name: 'a2', type: 'array', items: {} },
      { name: 'a3', type: 'array', items: { type: 'array' } },
      { name: 'a4', type: 'array', items: { type: 'dataSource' } },
      { name: 'a5', type: 'array', items: { type: 'object' } },
      { name: 'a6', type: 'array', items: { type: 'select' } },
      { name: 'a7', type: 'array', items: { type: 'multiselect', options: [] } },
      { name: 'a8', type: 'array', items: { type: 'nope' } },
      { name: 'a9', type: 'array', items: { type: 'select', options: ['x'] } },
      { name: 'a10', type: 'array', items: { type: 'object', fields: [{ name: 't', type: 'string' }] } },
    ];
    expect(paths(validateFieldSchema(schema))).toEqual([
      'schema[0].items',
      'schema[1].items',
      'schema[2].items.type',
      'schema[3].items.type',
      'schema[4].items.type',
      'schema[5].items.fields',
      'schema[6].items.options',
      'schema[7].items.options',
      'schema[8].items.type',
    ]);
  });

  it('number min/max, string minLength/maxLength, array minItems/maxItems', () => {
    const schema = [
      { name: 'n0', type: 'number', min: 5, max: 1 },
      { name: 'n1', type: 'number', min: '1', max: Infinity },
      { name: 'n2', type: 'number', min: -1.5, max: -1.5 },
      { name: 's0', type: 'string', minLength: 10, maxLength: 5 },
      { name: 's1', type: 'text', minLength: -1, maxLength: 1.5 },
      { name: 's2', type: 'string', minLength: 0, maxLength: 0 },
      { name: 'a0', type: 'array', items: { type: 'string' }, minItems: 3, maxItems: 2 },
      { name: 'a1', type: 'array', items: { type: 'string' }, minItems: -1 },
      { name: 'a2', type: 'array', items: { type: 'string', maxLength: -3 }, minItems: 2, maxItems: 2 },
    ];
    expect(paths(validateFieldSchema(schema))).toEqual([
      'schema[0].max',
      'schema[1].min',
      'schema[1].max',
      'schema[3].maxLength',
      'schema[4].minLength',
      'schema[4].maxLength',
      'schema[6].maxItems',
      'schema[7].minItems',
      'schema[8].items.maxLength',
    ]);
  });

  it('dataSource fields have the B2 shape: a known source, filters an object, limit 1-100', () => {
    const schema = [
      { name: 'd0', type: 'dataSource' },
      { name: 'd1', type: 'dataSource', source: 'reviews' },
      { name: 'd2', type: 'dataSource', source: '' },
      { name: 'd3', type: 'dataSource', source: 'contents', limit: 0, filters: [] },
      { name: 'd4', type: 'dataSource', source: 'contents', limit: 101 },
      { name: 'd5', type: 'dataSource', source: 'tags', limit: 1.5 },
      { name: 'd6', type: 'dataSource', source: 'siteBlocks', limit: 100, filters: { type: 'global' } },
      { name: 'd7', type: 'dataSource', source: 'forms', limit: 1 },
    ];
    expect(paths(validateFieldSchema(schema))).toEqual([
      'schema[0].source',
      'schema[1].source',
      'schema[2].source',
      'schema[3].limit',
      'schema[3].filters',
      'schema[4].limit',
      'schema[5].limit',
    ]);
  });

  it('dataSource fields may sit in objects but never inside arrays, and at most 10 per schema', () => {
    const inObject = [{ name: 'o', type: 'object', fields: [{ name: 'latest', type: 'dataSource', source: 'contents' }] }];
    expect(validateFieldSchema(inObject)).toEqual([]);
    const inArray = [{ name: 'a', type: 'array', items: { type: 'object', fields: [{ name: 'latest', type: 'dataSource', source: 'contents' }] } }];
    expect(paths(validateFieldSchema(inArray))).toEqual(['schema[0].items.fields[0].type']);
    const ten = Array.from({ length: 10 }, (_, i) => ({ name: `d${i}`, type: 'dataSource', source: 'tags' }));
    expect(validateFieldSchema(ten)).toEqual([]);
    const eleven = [...ten, { name: 'o', type: 'object', fields: [{ name: 'd10', type: 'dataSource', source: 'tags' }] }];
    expect(paths(validateFieldSchema(eleven))).toEqual(['schema[10].fields[0]']);
  });
});

// ---------------------------------------------------------------------------------------------

/** A bad value whose issue is not at `data.v` itself. */
class At {
  constructor(
    readonly value: unknown,
    readonly path: string,
  ) {}
}
const at = (value: unknown, path: string): At => new At(value, path);

/** One field of each of the 17 types, with passing and failing values (failing at `data.v` unless wrapped in `at`). */
const TYPE_CASES: Array<{ def: FieldDefinition; ok: unknown[]; bad: unknown[] }> = [
  { def: { name: 'v', type: 'string' }, ok: ['', 'hello', 'x'.repeat(100_000)], bad: [1, true, {}, 'x'.repeat(100_001)] },
  { def: { name: 'v', type: 'text' }, ok: ['multi\nline'], bad: [[], 'x'.repeat(100_001)] },
  {
    def: { name: 'v', type: 'richtext' },
    ok: ['# Title', { type: 'doc', content: [{ type: 'paragraph' }] }, { type: 'doc' }],
    bad: [{ type: 'paragraph' }, { content: [] }, { type: 'doc', content: 'x' }, 5, ['doc']],
  },
  { def: { name: 'v', type: 'number' }, ok: [0, -3.5, 1e9], bad: ['1', NaN, Infinity, true] },
  { def: { name: 'v', type: 'boolean' }, ok: [true, false], bad: ['true', 0, 1] },
  {
    // A plain-string option (accepted by validateFieldSchema as a convenience) counts as { value }.
    def: { name: 'v', type: 'select', options: ['a', { value: 'b', label: 'B' }] as unknown as FieldDefinition['options'] },
    ok: ['a', 'b'],
    bad: ['c', 'B', ['a'], 1],
  },
  {
    def: { name: 'v', type: 'multiselect', options: [{ value: 'a' }, { value: 'b' }] },
    ok: [[], ['a'], ['b', 'a']],
    bad: ['a', { a: true }, at(['a', 'c'], 'data.v[1]'), at(['a', 'a'], 'data.v[1]'), at([1], 'data.v[0]')],
  },
  {
    def: { name: 'v', type: 'image' },
    ok: ['https://cdn.example.com/a.png', '3f2b1c9e-5d6a-4e8f-9b0c-1a2b3c4d5e6f', { id: 'abc' }, { url: '/media/a.png', alt: 'x' }],
    bad: ['', 'x'.repeat(2049), { id: 5 }, { alt: 'x' }, { id: '' }, 12],
  },
  { def: { name: 'v', type: 'file' }, ok: ['/files/a.pdf', { id: 'f1' }], bad: [{}, [], false] },
  {
    def: { name: 'v', type: 'url' },
    ok: ['https://example.com', 'http://example.com/a?b=c#d', '/about', '/', 'HTTPS://EXAMPLE.COM/x'],
    bad: ['example.com', 'ftp://example.com', 'javascript:alert(1)', '//evil.com', '/\\evil.com', 'https://', 'https:foo', '/a b', 'about', 5],
  },
  {
    def: { name: 'v', type: 'email' },
    ok: ['a@example.com', 'first.last+tag@sub.example.co.uk'],
    bad: ['a@b', 'no-at.example.com', 'a@@example.com', 'a b@example.com', `${'a'.repeat(250)}@example.com`, '.a@example.com', 1],
  },
  {
    def: { name: 'v', type: 'date' },
    ok: ['2026-02-28', '2024-02-29', '2000-02-29', '2026-12-31'],
    bad: ['2026-02-30', '2026-02-29', '1900-02-29', '2026-13-01', '2026-00-10', '2026-04-31', '2026-1-01', '2026-01-01T00:00:00Z', 20260101],
  },
  {
    def: { name: 'v', type: 'datetime' },
    ok: ['2026-01-31T09:30:00Z', '2026-01-31T09:30Z', '2026-01-31T09:30:00.123+02:00', '2026-01-31T23:59:59.123456-05:30'],
    bad: [
      '2026-01-31',
      '2026-01-31T09:30:00',
      '2026-02-30T09:30:00Z',
      '2026-01-31T24:00:00Z',
      '2026-01-31T09:60:00Z',
      '2026-01-31 09:30:00Z',
      '2026-01-31T09:30:00+25:00',
      1769851800000,
    ],
  },
  {
    def: { name: 'v', type: 'color' },
    ok: ['#fff', '#A1B2C3', '#a1b2c3d4'],
    bad: ['fff', '#ffff', '#12345', '#ggg', 'red', '#1234567'],
  },
  {
    def: { name: 'v', type: 'object', fields: [{ name: 'city', type: 'string' }] },
    ok: [{}, { city: 'Paris' }, { city: 'Paris', extra: 1 }],
    bad: ['Paris', ['Paris'], at({ city: 5 }, 'data.v.city')],
  },
  {
    def: { name: 'v', type: 'array', items: { type: 'number' } },
    ok: [[], [1, 2, 3]],
    bad: [1, { 0: 1 }, at([1, 'two'], 'data.v[1]'), at([null], 'data.v[0]')],
  },
  { def: { name: 'v', type: 'dataSource', source: 'contents' }, ok: [undefined], bad: [[], 'x', null, {}] },
];

describe('validateFieldData: each of the 17 types', () => {
  it('covers all 17 types', () => {
    expect(new Set(TYPE_CASES.map((c) => c.def.type))).toEqual(new Set(FIELD_TYPES));
  });

  for (const { def, ok, bad } of TYPE_CASES) {
    it(`${def.type}: accepts valid values`, () => {
      expect(validateFieldSchema([def])).toEqual([]);
      for (const value of ok) {
        expect({ value, issues: validateFieldData([def], { v: value }) }).toEqual({ value, issues: [] });
      }
    });
    it(`${def.type}: refuses invalid values with the exact path`, () => {
      for (const entry of bad) {
        const { value, path } = entry instanceof At ? entry : { value: entry, path: 'data.v' };
        expect({ value, paths: paths(validateFieldData([def], { v: value })) }).toEqual({ value, paths: [path] });
      }
    });
  }

  it('names the exact path of a bad scalar', () => {
    expect(validateFieldData([{ name: 'when', type: 'date' }], { when: '2026-02-30' })).toEqual([
      { path: 'data.when', message: 'must be a valid date (YYYY-MM-DD)' },
    ]);
  });

  it('multiselect: each item in options, unique, item paths', () => {
    const schema: FieldDefinition[] = [{ name: 'tags', type: 'multiselect', options: opts('a', 'b'), minItems: 1, maxItems: 2 }];
    expect(paths(validateFieldData(schema, { tags: ['a', 'c', 'a', 3] }))).toEqual(['data.tags', 'data.tags[1]', 'data.tags[2]', 'data.tags[3]']);
    expect(paths(validateFieldData(schema, { tags: [] }))).toEqual(['data.tags']);
    expect(validateFieldData(schema, { tags: ['b', 'a'] })).toEqual([]);
  });

  it('honours minLength/maxLength, min/max, minItems/maxItems', () => {
    const schema: FieldDefinition[] = [
      { name: 's', type: 'string', minLength: 2, maxLength: 3 },
      { name: 'n', type: 'number', min: 1, max: 10 },
      { name: 'a', type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2 },
    ];
    expect(validateFieldData(schema, { s: 'ab', n: 10, a: ['x'] })).toEqual([]);
    expect(validateFieldData(schema, { s: 'abc', n: 1, a: ['x', 'y'] })).toEqual([]);
    expect(paths(validateFieldData(schema, { s: 'a', n: 0, a: [] }))).toEqual(['data.s', 'data.n', 'data.a']);
    expect(paths(validateFieldData(schema, { s: 'abcd', n: 10.5, a: ['x', 'y', 'z'] }))).toEqual(['data.s', 'data.n', 'data.a']);
  });
});

describe('validateFieldData: data shape, required, partial, orphans, dataSource', () => {
  const schema: FieldDefinition[] = [
    { name: 'title', type: 'string', required: true },
    { name: 'count', type: 'number' },
    { name: 'tags', type: 'array', required: true, items: { type: 'string' } },
    { name: 'reviews', type: 'dataSource', source: 'contents' },
  ];

  it('data must be a plain object', () => {
    for (const data of [null, [], 'x', 5, undefined, new Date()]) {
      expect(paths(validateFieldData(schema, data))).toEqual(['data']);
    }
    expect(paths(validateFieldData(schema, [], 'body.customData'))).toEqual(['body.customData']);
  });

  it('required fields must be present, non-null and (for strings) not empty', () => {
    expect(paths(validateFieldData(schema, {}))).toEqual(['data.title', 'data.tags']);
    expect(paths(validateFieldData(schema, { title: null, tags: null }))).toEqual(['data.title', 'data.tags']);
    expect(paths(validateFieldData(schema, { title: '', tags: [] }))).toEqual(['data.title']);
    expect(validateFieldData(schema, { title: 'x', tags: [] })).toEqual([]);
    expect(validateFieldData(schema, { title: 'x', tags: [] })).toEqual([]);
  });

  it('null is accepted for non-required fields', () => {
    expect(validateFieldData(schema, { title: 'x', tags: [], count: null })).toEqual([]);
  });

  it('partial: absent keys are not required, present keys are validated', () => {
    expect(validateFieldData(schema, {}, 'data', { partial: true })).toEqual([]);
    expect(validateFieldData(schema, { count: 3 }, 'data', { partial: true })).toEqual([]);
    expect(paths(validateFieldData(schema, { count: 'three' }, 'data', { partial: true }))).toEqual(['data.count']);
    expect(paths(validateFieldData(schema, { title: null, tags: 'x' }, 'data', { partial: true }))).toEqual(['data.title', 'data.tags']);
    expect(paths(validateFieldData(schema, { title: '' }, 'data', { partial: true }))).toEqual(['data.title']);
  });

  it('orphaned keys are accepted and not validated', () => {
    const data = { title: 'x', tags: [], oldField: { anything: [1, 2] }, removed: null };
    expect(validateFieldData(schema, data)).toEqual([]);
    expect(data.oldField).toEqual({ anything: [1, 2] });
    // An orphan that shares a prototype name is still just an orphan.
    expect(validateFieldData(schema, JSON.parse('{"title":"x","tags":[],"__proto__":{"a":1},"constructor":1}'))).toEqual([]);
  });

  it('does not mistake inherited properties for values', () => {
    expect(paths(validateFieldData([{ name: 'toString', type: 'string', required: true }], {}))).toEqual(['data.toString']);
  });

  it('refuses any value for a dataSource field (read-only)', () => {
    expect(validateFieldData(schema, { title: 'x', tags: [], reviews: [] })).toEqual([
      { path: 'data.reviews', message: expect.stringContaining('read-only') as string },
    ]);
    expect(paths(validateFieldData(schema, { reviews: null }, 'data', { partial: true }))).toEqual(['data.reviews']);
    expect(validateFieldData([{ name: 'r', type: 'dataSource', required: true, source: 'contents' }], {})).toEqual([]);
  });

  it('reports every issue, capped at 100', () => {
    const s = flatSchema(150).map((f) => ({ ...f, type: 'number' as const }));
    const data = Object.fromEntries(s.map((f) => [f.name, 'nan']));
    const issues = validateFieldData(s, data);
    expect(issues).toHaveLength(100);
    expect(issues[0]!.path).toBe('data.f0');
    expect(issues[99]!.path).toBe('data.f99');
  });
});

describe('validateFieldData: nested paths', () => {
  const schema: FieldDefinition[] = [
    {
      name: 'address',
      type: 'object',
      fields: [
        { name: 'city', type: 'string', required: true },
        { name: 'geo', type: 'object', fields: [{ name: 'lat', type: 'number', min: -90, max: 90 }] },
      ],
    },
    {
      name: 'links',
      type: 'array',
      items: {
        type: 'object',
        fields: [
          { name: 'title', type: 'string', required: true },
          { name: 'href', type: 'url' },
        ],
      },
    },
    { name: 'colors', type: 'array', items: { type: 'color' } },
    { name: 'choices', type: 'array', items: { type: 'select', options: opts('x', 'y') } },
    { name: 'matrix', type: 'array', items: { type: 'multiselect', options: opts('x', 'y') } },
  ];

  it('accepts valid nested data', () => {
    expect(validateFieldSchema(schema)).toEqual([]);
    expect(
      validateFieldData(schema, {
        address: { city: 'Lyon', geo: { lat: 45.7 }, orphan: true },
        links: [
          { title: 'Home', href: '/' },
          { title: 'Docs', href: 'https://example.com/docs', extra: 1 },
        ],
        colors: ['#fff', '#000000'],
        choices: ['x', 'y', 'x'],
        matrix: [['x'], ['x', 'y']],
      }),
    ).toEqual([]);
  });

  it('names nested object paths', () => {
    expect(paths(validateFieldData(schema, { address: { city: 7, geo: { lat: 91 } } }))).toEqual(['data.address.city', 'data.address.geo.lat']);
    expect(paths(validateFieldData(schema, { address: {} }))).toEqual(['data.address.city']);
    expect(paths(validateFieldData(schema, { address: { city: 'x', geo: 'north' } }))).toEqual(['data.address.geo']);
  });

  it('nested objects are validated in full even when partial', () => {
    expect(paths(validateFieldData(schema, { address: {} }, 'data', { partial: true }))).toEqual(['data.address.city']);
  });

  it('names array item paths', () => {
    expect(
      paths(
        validateFieldData(schema, {
          links: [{ title: 'ok' }, 'not an object', { href: 'nope' }, null],
          colors: ['#fff', 'blue'],
          choices: ['x', 'z'],
          matrix: [['x'], ['y', 'q']],
        }),
      ),
    ).toEqual(['data.links[1]', 'data.links[2].title', 'data.links[2].href', 'data.links[3]', 'data.colors[1]', 'data.choices[1]', 'data.matrix[1][1]']);
  });

  it('uses the base path', () => {
    expect(paths(validateFieldData(schema, { links: [{}] }, 'customData'))).toEqual(['customData.links[0].title']);
  });
});

describe('normalizeFieldSchema', () => {
  it('turns plain-string options into { value } at every level and keeps everything else', () => {
    const input = [
      { name: 's', type: 'select', options: ['a', { value: 'b', label: 'B' }], width: 'half' },
      { name: 'o', type: 'object', fields: [{ name: 'm', type: 'multiselect', options: ['x'] }] },
      { name: 'l', type: 'array', items: { type: 'select', options: ['y'] } },
      { name: 'n', type: 'array', items: { type: 'object', fields: [{ name: 'z', type: 'select', options: ['z'] }] } },
    ];
    const before = structuredClone(input);
    expect(validateFieldSchema(input)).toEqual([]);
    const out = normalizeFieldSchema(input);
    expect(out).toEqual([
      { name: 's', type: 'select', options: [{ value: 'a' }, { value: 'b', label: 'B' }], width: 'half' },
      { name: 'o', type: 'object', fields: [{ name: 'm', type: 'multiselect', options: [{ value: 'x' }] }] },
      { name: 'l', type: 'array', items: { type: 'select', options: [{ value: 'y' }] } },
      { name: 'n', type: 'array', items: { type: 'object', fields: [{ name: 'z', type: 'select', options: [{ value: 'z' }] }] } },
    ]);
    expect(input).toEqual(before);
    expect(validateFieldSchema(out)).toEqual([]);
  });
});

describe('effectiveSchema', () => {
  const a: FieldDefinition[] = [{ name: 'a', type: 'string' }];
  const b: FieldDefinition[] = [{ name: 'b', type: 'string' }];

  it('returns the nearest own non-empty schema', () => {
    expect(
      effectiveSchema([
        { schemaSource: 'own', schema: a },
        { schemaSource: 'own', schema: b },
      ]),
    ).toBe(a);
    expect(
      effectiveSchema([
        { schemaSource: 'inherit', schema: a },
        { schemaSource: 'own', schema: b },
      ]),
    ).toBe(b);
    expect(
      effectiveSchema([
        { schemaSource: 'own', schema: [] },
        { schemaSource: 'own', schema: null },
        { schemaSource: 'inherit', schema: null },
        { schemaSource: 'own', schema: b },
      ]),
    ).toBe(b);
  });

  it('returns null when nothing qualifies', () => {
    expect(effectiveSchema([])).toBeNull();
    expect(
      effectiveSchema([
        { schemaSource: 'inherit', schema: a },
        { schemaSource: 'own', schema: [] },
      ]),
    ).toBeNull();
  });
});

describe('performance', () => {
  it('validates a 250-field flat schema and matching data well under 5 ms', () => {
    const types = ['string', 'number', 'boolean', 'email', 'url', 'date', 'datetime', 'color', 'select', 'text'] as const;
    const values: Record<(typeof types)[number], unknown> = {
      string: 'hello',
      number: 42,
      boolean: true,
      email: 'a@example.com',
      url: 'https://example.com/x',
      date: '2026-01-31',
      datetime: '2026-01-31T09:30:00Z',
      color: '#abcdef',
      select: 'b',
      text: 'lorem ipsum',
    };
    const schema: FieldDefinition[] = Array.from({ length: 250 }, (_, i) => {
      const type = types[i % types.length]!;
      const def: FieldDefinition = { name: `f${i}`, type, label: `Field ${i}`, required: i % 2 === 0 };
      if (type === 'select') def.options = [{ value: 'a' }, { value: 'b' }, { value: 'c' }];
      return def;
    });
    const data = Object.fromEntries(schema.map((f) => [f.name, values[f.type as (typeof types)[number]]]));

    // Warm up, then take the best of several runs to be robust against a noisy machine.
    for (let i = 0; i < 20; i++) {
      validateFieldSchema(schema);
      validateFieldData(schema, data);
    }
    let best = Infinity;
    for (let run = 0; run < 10; run++) {
      const start = performance.now();
      const schemaIssues = validateFieldSchema(schema);
      const dataIssues = validateFieldData(schema, data);
      best = Math.min(best, performance.now() - start);
      expect(schemaIssues).toEqual([]);
      expect(dataIssues).toEqual([]);
    }
    expect(best).toBeLessThan(5);
  });
});
