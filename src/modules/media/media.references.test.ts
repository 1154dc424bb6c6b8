import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { createTokenFor } from '../../../test/helpers/app.js';
import { client, expectErrorShape, multipartBody } from '../../../test/helpers/http.js';
import { type SiteClient, useTestApp } from '../../../test/helpers/suite.js';

const ctx = useTestApp();

async function upload(api: SiteClient, filename: string, data: Buffer) {
  const { payload, headers } = multipartBody([{ name: 'file', filename, data }]);
  const res = await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', payload, headers: { ...headers, authorization: `Bearer ${api.token}` } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}
const png = () =>
  sharp({ create: { width: 900, height: 300, channels: 3, background: 'teal' } })
    .png()
    .toBuffer();
const pdf = () => Buffer.from('%PDF-1.4\n% a document\n');

describe('media references (issue 10 item 7, decisions M15, N9)', () => {
  it('counts and lists the contents (featured image, body) and site blocks (image and file fields) using a file, as they change', async () => {
    const api = await ctx.site();
    const [hero, inline, doc, lonely] = [
      await upload(api, 'hero.png', await png()),
      await upload(api, 'inline.png', await png()),
      await upload(api, 'doc.pdf', pdf()),
      await upload(api, 'lonely.png', await png()),
    ];
    const created = await api.post('/v1/contents', {
      type: 'post',
      title: 'Field trip',
      featuredImageUrl: hero.url,
      bodyMarkdown: `Look: ![a view](${inline.url}?w=400) and [the notes](${doc.url}).`,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const post = created.body.data;
    // N9: the featured image's variants on the detail, for a raster file of the site.
    expect((await api.get(`/v1/contents/${post.id}`)).body.featuredImage).toEqual({ url: hero.url, alt: null, variants: hero.variants });
    const external = (await api.post('/v1/contents', { type: 'post', title: 'Elsewhere', featuredImageUrl: 'https://cdn.example.com/a.png' })).body.data;
    expect((await api.get(`/v1/contents/${external.id}`)).body.featuredImage.variants).toBeNull();
    const docFeatured = (await api.post('/v1/contents', { type: 'post', title: 'Doc', featuredImageUrl: doc.url })).body.data;
    expect((await api.get(`/v1/contents/${docFeatured.id}`)).body.featuredImage.variants).toBeNull();

    const block = await api.post('/v1/site-blocks', {
      name: 'Footer',
      type: 'global',
      schema: [
        { name: 'logo', type: 'image' },
        { name: 'brochure', type: 'file' },
      ],
    });
    expect(block.status, JSON.stringify(block.body)).toBe(201);
    const blockId = block.body.data.id;
    const put = await api.put(`/v1/site-blocks/${block.body.data.slug}/data`, { data: { logo: hero.url, brochure: { id: doc.id } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);

    const refs = async (id: string) => (await api.get(`/v1/media/${id}`)).body.data.references;
    expect(await refs(hero.id)).toEqual({ contents: 1, siteBlocks: 1 });
    expect(await refs(inline.id)).toEqual({ contents: 1, siteBlocks: 0 });
    expect(await refs(doc.id)).toEqual({ contents: 2, siteBlocks: 1 });
    expect(await refs(lonely.id)).toEqual({ contents: 0, siteBlocks: 0 });
    const list = await api.get(`/v1/media/${doc.id}/references`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      data: [
        { type: 'content', id: post.id, title: 'Field trip' },
        { type: 'content', id: docFeatured.id, title: 'Doc' },
        { type: 'siteBlock', id: blockId, title: 'Footer' },
      ],
    });
    const ids = async (q: string) => (await api.get(`/v1/media?${q}&sortBy=filename&sortOrder=asc`)).body.data.map((m: any) => m.filename);
    expect(await ids('unused=true')).toEqual(['lonely.png']);
    expect(await ids('unused=false')).toEqual(['doc.pdf', 'hero.png', 'inline.png']);
    expect(await ids('unused=true&type=image')).toEqual(['lonely.png']);
    expect((await api.get('/v1/media?unused=maybe')).status).toBe(422);

    // A write that leaves the body alone keeps its references; one that changes a field replaces only that field's.
    await api.put(`/v1/contents/${post.id}`, { title: 'Field trip, day 2' });
    expect(await refs(inline.id)).toEqual({ contents: 1, siteBlocks: 0 });
    await api.put(`/v1/contents/${post.id}`, { featuredImageUrl: null });
    expect(await refs(hero.id)).toEqual({ contents: 0, siteBlocks: 1 });
    expect(await refs(inline.id)).toEqual({ contents: 1, siteBlocks: 0 });
    await api.put(`/v1/contents/${post.id}`, { bodyMarkdown: `Now ![only](${lonely.url})` });
    expect(await refs(inline.id)).toEqual({ contents: 0, siteBlocks: 0 });
    expect(await refs(lonely.id)).toEqual({ contents: 1, siteBlocks: 0 });
    // A revision restored (the first: title, featured image and body) brings its references back.
    const revisions = (await api.get(`/v1/contents/${post.id}/revisions`)).body.data;
    const first = revisions[revisions.length - 1];
    expect((await api.post(`/v1/contents/${post.id}/revisions/${first.id}/restore`)).status).toBe(200);
    expect(await refs(hero.id)).toEqual({ contents: 1, siteBlocks: 1 });
    expect(await refs(lonely.id)).toEqual({ contents: 0, siteBlocks: 0 });

    // Deleting a content or a site block takes its references with it; a trashed file keeps them.
    expect((await api.delete(`/v1/contents/${docFeatured.id}`)).status).toBe(200);
    await api.delete(`/v1/site-blocks/${block.body.data.slug}`);
    expect(await refs(doc.id)).toEqual({ contents: 1, siteBlocks: 0 });
    await api.delete(`/v1/media/${doc.id}`);
    expect((await api.get(`/v1/media/${doc.id}/references`)).body.data).toEqual([{ type: 'content', id: post.id, title: 'Field trip' }]);
    expect((await api.delete(`/v1/media/${doc.id}/force`)).status).toBe(200);
    expect((await api.get(`/v1/media/${doc.id}/references`)).status).toBe(404);
    expect((await api.get(`/v1/contents/${post.id}`)).status).toBe(200);
  });

  it("never counts another site's file, and another site's file is a 404", async () => {
    const api = await ctx.site();
    const other = await ctx.site();
    const theirs = await upload(other, 'theirs.png', await png());
    const mine = (await api.post('/v1/contents', { type: 'post', title: 'Borrowed', featuredImageUrl: theirs.url, bodyMarkdown: `![x](${theirs.url})` })).body
      .data;
    expect((await api.get(`/v1/contents/${mine.id}`)).body.featuredImage.variants).toBeNull();
    expect((await other.get(`/v1/media/${theirs.id}`)).body.data.references).toEqual({ contents: 0, siteBlocks: 0 });
    expect((await api.get(`/v1/media/${theirs.id}/references`)).status).toBe(404);
    expect((await other.get(`/v1/media/${theirs.id}/references`)).body).toEqual({ data: [] });
    // The list names drafts: a delivery token of the site is refused it.
    const delivery = client(ctx.app, (await createTokenFor(ctx.app, other.siteId, { kind: 'delivery', scopes: ['media.view'] })).token);
    expect((await delivery.get(`/v1/media/${theirs.id}`)).status).toBe(200);
    const refused = await delivery.get(`/v1/media/${theirs.id}/references`);
    expect(refused.status).toBe(403);
    expectErrorShape(refused.body, 403);
  });
});
