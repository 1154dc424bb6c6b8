import { createRequire } from 'node:module';

type Serializer = (payload: unknown) => string;
type BuildSerializer = (externalSchemas: Record<string, unknown>, options?: unknown) => (route: { schema: object }) => Serializer;

// The compiler Fastify uses by default (fast-json-stringify), resolved from Fastify itself so the versions always match.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const defaultBuild = (fromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector(): BuildSerializer }).SerializerSelector();

/** Compiled serializers by shared schemas and options, then by response schema: pure functions of their JSON. */
const compiled = new Map<string, Map<string, Serializer>>();

/**
 * Fastify's response serializer compiler, memoized. Compiling is most of an app's start-up CPU
 * (about 2.5 s on this machine): routes repeat the same error and record schemas, and tests
 * build many apps in one process; an identical schema now compiles once per process, and only
 * when a route first answers with it.
 */
export function buildSerializer(externalSchemas: Record<string, unknown>, options?: unknown) {
  const build = defaultBuild(externalSchemas, options);
  const contextKey = JSON.stringify([externalSchemas, options ?? null]);
  let serializers = compiled.get(contextKey);
  if (!serializers) compiled.set(contextKey, (serializers = new Map()));
  const known = serializers;
  const compile = (route: { schema: object }): Serializer => {
    const key = JSON.stringify(route.schema);
    let serializer = known.get(key);
    if (!serializer) known.set(key, (serializer = build(route)));
    return serializer;
  };
  // Compiled when the route first answers with that status, not at start-up (issue 37 item 5).
  return (route: { schema: object }): Serializer => {
    let serializer: Serializer | undefined;
    return (payload) => (serializer ??= compile(route))(payload);
  };
}
