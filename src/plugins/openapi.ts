import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Config } from '../config.js';
import { openApiWebhooks } from '../modules/webhooks/webhooks.schemas.js';
import type { EventDescriptions } from '../modules/types.js';
import { type NamedDocument, nameSchemas } from './openapi-names.js';
import { IDEMPOTENCY_PARAMETER } from './idempotency.js';
import { withoutStoredJsonKeyword } from '../shared/stored-json.js';

/** Where the reference UI lives; @fastify/swagger-ui adds its routes with no way to declare a scope, so the route guard takes them as public. */
export const DOCS_PREFIX = '/docs';

/** OpenAPI 3.1 generated from the route schemas, served at /openapi.json; the reference UI at /docs. */
export async function registerOpenApi(
  app: FastifyInstance,
  config: Config,
  version: string,
  events: EventDescriptions,
  idempotentOperations: ReadonlySet<string> = new Set(),
): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Cairn API',
        version,
        description:
          'Multi-site headless content management. Every /v1 request carries `Authorization: Bearer <token>`; ' +
          'each operation names its scope (`x-scope`). Errors share one body: ' +
          '`{ statusCode, error, code, message, errors? }`.',
        // package.json says UNLICENSED: proprietary, no licence is granted. Named so readers (and Redocly's lint) see it.
        license: { name: 'UNLICENSED (proprietary, all rights reserved)' },
      },
      servers: [{ url: config.publicUrl }],
      // What Cairn sends to a site's webhooks: one entry per event type (OpenAPI 3.1 `webhooks`),
      // as the modules that emit them describe them.
      webhooks: openApiWebhooks(events) as never,
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A site API token' },
          siteKey: { type: 'apiKey', in: 'header', name: 'X-Site-Key', description: "The site's public key (not a secret): GET /site/info" },
          siteKeyQuery: { type: 'apiKey', in: 'query', name: 'siteKey', description: 'The site key as a query parameter, for clients that cannot set headers' },
        },
        parameters: { IdempotencyKey: IDEMPOTENCY_PARAMETER },
      },
    },
    transformObject: (document) =>
      ('openapiObject' in document
        ? nameSchemas(withIdempotencyKeys(optionalDefaults(withoutStoredJsonKeyword(document.openapiObject as OpenApiDocument)), idempotentOperations))
        : document.swaggerObject) as never,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX, uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { config: { scope: 'public' }, schema: { hide: true } }, async () => app.swagger());
}

type OpenApiDocument = NamedDocument & {
  paths?: Record<string, Record<string, { parameters?: ({ in: string; required?: boolean; schema?: { default?: unknown } } | { $ref: string })[] }>>;
};

/** Every create (`post <path>`) takes the reusable Idempotency-Key header parameter (decisions HR4). */
function withIdempotencyKeys<T extends OpenApiDocument>(doc: T, operations: ReadonlySet<string>): T {
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    const post = methods.post;
    if (post && operations.has(`post ${path}`)) (post.parameters ??= []).push({ $ref: '#/components/parameters/IdempotencyKey' });
  }
  return doc;
}

/**
 * A query parameter with a default (page, limit) is filled in by the server, so a client may omit
 * it; @fastify/swagger marks it required because the schema makes it so after defaults apply.
 */
function optionalDefaults<T extends OpenApiDocument>(doc: T): T {
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) {
        if ('in' in parameter && parameter.in === 'query' && parameter.schema?.default !== undefined) parameter.required = false;
      }
    }
  }
  return doc;
}
