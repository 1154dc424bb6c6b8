import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestContext } from '../helpers/app.js';

/**
 * Every request pays for the hooks on its route, so a route carries only the hooks that have
 * work there (issue 37, decisions PF2). Read from Fastify's own route tree: the names of the
 * hooks each route runs, per hook kind.
 */
function hooksOf(tree: string, method: string, url: string): Record<string, string[]> {
  const lines = tree.split('\n');
  const at = lines.findIndex((line) => line.includes(`${url} (${method})`));
  if (at < 0) throw new Error(`no route ${method} ${url} in the tree`);
  const hooks: Record<string, string[]> = {};
  for (const line of lines.slice(at + 1)) {
    const m = /• \((\w+)\) (\[.*\])$/.exec(line);
    if (!m) break;
    hooks[m[1]!] = (JSON.parse(m[2]!) as string[]).map((name) => name.replace('()', ''));
  }
  return hooks;
}

describe('the request pipeline (issue 37)', () => {
  let ctx: TestContext;
  let tree: string;
  beforeAll(async () => {
    ctx = await buildTestApp({ redisUrl: null });
    tree = ctx.app.printRoutes({ includeHooks: true, commonPrefix: false });
  });
  afterAll(() => ctx.close());

  it('a token read runs the preflight check, the limiter and authentication, then sets the request id: nothing else', () => {
    expect(hooksOf(tree, 'GET', '/v1/site/info')).toEqual({ onRequest: ['corsPreflight', 'rateLimit', 'authenticate'], onSend: ['requestId'] });
  });

  it('a write also moves its site on in the delivery cache; a read that delivery tokens may cache looks it up and stores', () => {
    expect(hooksOf(tree, 'PUT', '/v1/site/settings').onSend).toEqual(['requestId', 'forgetSiteAnswers']);
    expect(hooksOf(tree, 'GET', '/v1/contents')).toMatchObject({
      onRequest: ['corsPreflight', 'rateLimit', 'authenticate', 'deliveryCacheLookup'],
      onSend: ['requestId', 'deliveryCacheStore'],
    });
  });

  it('the health check and media files are never counted, so they carry no limiter', () => {
    expect(hooksOf(tree, 'GET', '/health')).toEqual({ onRequest: ['corsPreflight'], onSend: ['requestId'] });
  });
});
