/**
 * Compile-time guard of the generated types (decisions TC1): checked by `tsc --noEmit` under the
 * package's TypeScript 5 and the service's TypeScript 7. Each `@ts-expect-error` must meet an
 * error: if the document stopped rejecting the call, the line would fail the check.
 */
import { type CairnError, createCairnClient, createCairnPublicClient, publicHelpers, type Schemas } from '../src/index.js';

const client = createCairnClient({ baseUrl: 'https://cms.example.org', token: 'cairn_token' });

export async function positive() {
  const tags = await client.GET('/v1/tags', { params: { query: { page: 2, limit: 10, sortBy: 'name', sortOrder: 'asc' } } });
  if (tags.data) {
    const name: string = tags.data.data[0]!.name;
    const lastPage: number = tags.data.meta.lastPage;
    void [name, lastPage];
  }
  const tokens = await client.GET('/v1/api-tokens');
  if (tokens.data) {
    const scopes: string[] = tokens.data.data[0]!.scopes;
    void scopes;
  }
  const created = await client.POST('/v1/tags', { body: { name: 'News' } });
  if (created.error) {
    const error: CairnError = created.error;
    const code: string = error.code;
    const fields: string[] | undefined = error.errors?.name;
    void [code, fields];
  } else {
    const id: number = created.data.data.id;
    await client.PUT('/v1/tags/{id}', { params: { path: { id } }, body: { description: null } });
  }
  const posts = await client.GET('/v1/contents', { params: { query: { type: 'post', status: 'published', sortBy: 'published_at', sortOrder: 'desc' } } });
  if (posts.data) {
    const title: string = posts.data.data[0]!.title;
    void title;
  }
  await client.POST('/v1/webhooks', { body: { url: 'https://hooks.example.org/cairn', events: ['content.published'] } });

  const site = publicHelpers(createCairnPublicClient({ baseUrl: 'https://cms.example.org', siteKey: 'pk_abc' }));
  const sent = await site.submitForm('contact', { email: 'ann@example.org', topics: ['a', 'b'] });
  if (sent.data) {
    const message: string = sent.data.data.message;
    void message;
  }
  await site.resolveRedirect('/old?x=1');
  const now = Date.now();
  const batch = await createCairnPublicClient({ baseUrl: 'https://cms.example.org', siteKey: 'pk_abc' }).POST('/v1/public/analytics/events', {
    body: { v: 1, u: 'https://example.org/blog/a', sentAt: now, events: [{ t: 'pageview', pv: 'k3j9a0', at: now }] },
  });
  if (batch.data) {
    const counts: [number, number] = [batch.data.accepted, batch.data.dropped];
    void counts;
  }
  await site.pageByPath('/about');

  // Every body and answer has a name of its own, to type one's own functions with.
  const draft: Schemas['CreateContentRequest'] = { type: 'post', title: 'Hello', status: 'draft', tagIds: [7] };
  const saved = await client.POST('/v1/contents', { body: draft });
  const answer: Schemas['ContentResponse'] | undefined = saved.data;
  const page: Schemas['TagPage'] | undefined = (await client.GET('/v1/tags')).data;
  const hook: Schemas['CreateWebhookRequest'] = { url: 'https://hooks.example.org/cairn', events: ['*'] }; // isActive has a default: optional
  void [answer?.data.slug, page?.meta.total, hook];
}

export async function negative() {
  // @ts-expect-error an unknown path
  await client.GET('/v1/nope');
  // @ts-expect-error a wrong body type: name is a string
  await client.POST('/v1/tags', { body: { name: 42 } });
  // @ts-expect-error a missing required field: name
  await client.POST('/v1/tags', { body: { description: 'no name' } });
  // @ts-expect-error a bad enum value: sortOrder is asc or desc
  await client.GET('/v1/tags', { params: { query: { sortOrder: 'up' } } });
  // @ts-expect-error a bad enum value: not an event of the catalog
  await client.POST('/v1/webhooks', { body: { url: 'https://hooks.example.org/cairn', events: ['content.eaten'] } });
  // @ts-expect-error a path parameter of the wrong type: a tag id is a number
  await client.GET('/v1/tags/{id}', { params: { path: { id: 'seven' } } });
  const site = createCairnPublicClient({ baseUrl: 'https://cms.example.org', siteKey: 'pk_abc' });
  // @ts-expect-error a bad enum value: the payload version is 1
  await site.POST('/v1/public/analytics/events', { body: { v: 2, u: 'https://example.org/', sentAt: 0, events: [] } });
  // @ts-expect-error the public client reaches only /v1/public/... paths (no token)
  await site.GET('/v1/tags');
  // @ts-expect-error a named request body keeps its rules: title is required
  const untitled: Schemas['CreateContentRequest'] = { type: 'post' };
  // @ts-expect-error a named answer is the answer's shape: a tag page has no single record
  const wrongShape: Schemas['TagPage']['data'] = { id: 1 };
  void [untitled, wrongShape];
}
