import { createRequire } from 'node:module';
import { needsUnwrap, serializableSchema, storedJsonSchemaIds, unwrapStoredJson } from '../shared/stored-json.js';

type Serializer = (payload: unknown) => string;
type BuildSerializer = (externalSchemas: Record<string, unknown>, options?: unknown) => (route: { schema: object }) => Serializer;

// The compiler Fastify uses by default (fast-json-stringify), resolved from Fastify itself so the versions always match.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const defaultBuild = (fromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector(): BuildSerializer }).SerializerSelector();

/** Per shared schemas and options: the compiled serializers by response schema, and how to compile them. */
interface Context {
  known: Map<string, Serializer>;
  /** The shared schemas holding stored JSON (decisions PF13), and the shared schemas as compiled. */
  storedIds: Set<string>;
  shared: Record<string, unknown>;
  options: unknown;
  build?: ReturnType<BuildSerializer>;
}
const contexts = new Map<string, Context>();

/**
 * fast-json-stringify's own Ajv (it picks `anyOf` branches with it) told that `unsafe`, its
 * format for strings written unescaped, is a format: stored JSON is compiled as one.
 */
function withUnsafeFormat(options: unknown): unknown {
  const given = (options ?? {}) as { ajv?: { formats?: Record<string, unknown> } };
  return { ...given, ajv: { ...given.ajv, formats: { ...given.ajv?.formats, unsafe: true } } };
}

/**
 * Fastify's response serializer compiler, memoized. Compiling is most of an app's start-up CPU
 * (about 2.5 s on this machine): routes repeat the same error and record schemas, and tests
 * build many apps in one process; an identical schema now compiles once per process, and only
 * when a route first answers with it. Stored JSON (shared/stored-json.ts, decisions PF13) is
 * compiled as an unescaped string and unwrapped after serializing, in the routes that have any.
 */
export function buildSerializer(externalSchemas: Record<string, unknown>, options?: unknown) {
  const contextKey = JSON.stringify([externalSchemas, options ?? null]);
  let context = contexts.get(contextKey);
  if (!context) {
    const storedIds = storedJsonSchemaIds(externalSchemas);
    const shared = storedIds.size ? serializableSchema(externalSchemas) : externalSchemas;
    contexts.set(contextKey, (context = { known: new Map(), storedIds, shared, options }));
  }
  const c = context;
  const compile = (route: { schema: object }): Serializer => {
    const key = JSON.stringify(route.schema);
    let serializer = c.known.get(key);
    if (!serializer) {
      c.build ??= defaultBuild(c.shared, withUnsafeFormat(c.options));
      const plain = c.build({ ...route, schema: serializableSchema(route.schema) });
      serializer = needsUnwrap(key, c.storedIds) ? (payload) => unwrapStoredJson(plain(payload)) : plain;
      c.known.set(key, serializer);
    }
    return serializer;
  };
  // Compiled when the route first answers with that status, not at start-up (issue 37 item 5).
  return (route: { schema: object }): Serializer => {
    let serializer: Serializer | undefined;
    return (payload) => (serializer ??= compile(route))(payload);
  };
}
