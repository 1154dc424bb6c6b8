/**
 * A page block for the site-block row of `npm run bench` (issue 14): the home page `/` of the
 * blog site (bench/seed-blog.ts), published, with a title, a hero and three dataSource fields of
 * 10 contents each (the latest posts, the posts of the most used category, those of the most used
 * tag), built through the service. Read by a delivery token, so every source lists published
 * contents only.
 */
import { sql } from 'kysely';
import type { Db } from '../src/db/types.js';
import { createToken } from '../src/modules/api-tokens/api-tokens.service.js';
import { createBlock, publishBlock, putData } from '../src/modules/site-blocks/site-blocks.service.js';
import type { BenchContext } from './endpoints.js';
import { seedBlog } from './seed-blog.js';

async function mostLinked(db: Db, table: 'content_categories' | 'content_tags', column: string, siteId: string): Promise<number> {
  const { rows } = await sql<{ id: number }>`select ${sql.ref(column)} as id from ${sql.table(table)} where site_id = ${siteId}
    group by ${sql.ref(column)} order by count(*) desc limit 1`.execute(db);
  return Number(rows[0]!.id);
}

export async function seedSiteBlocks(db: Db, siteId: string, userId: string, ctx: Readonly<BenchContext>): Promise<Record<string, unknown>> {
  if (!ctx.postId) Object.assign(ctx as BenchContext, await seedBlog(db, siteId, userId, ctx));
  const categoryId = await mostLinked(db, 'content_categories', 'category_id', siteId);
  const tagId = await mostLinked(db, 'content_tags', 'tag_id', siteId);
  const auth = { siteId, userId, kind: 'management' as const };
  await createBlock(db, auth, {
    name: 'Home',
    type: 'page',
    path: '/',
    schema: [
      { name: 'title', type: 'string', required: true },
      {
        name: 'hero',
        type: 'object',
        fields: [
          { name: 'heading', type: 'string' },
          { name: 'image', type: 'image' },
        ],
      },
      { name: 'latest', type: 'dataSource', source: 'contents', limit: 10 },
      { name: 'featured', type: 'dataSource', source: 'contents', filters: { categoryIds: [categoryId] }, limit: 10 },
      { name: 'tagged', type: 'dataSource', source: 'contents', filters: { tagIds: [tagId] }, limit: 10 },
    ],
  });
  await putData(db, auth, 'home', undefined, { title: 'Welcome', hero: { heading: 'Travel stories', image: '/media/hero.jpg' } });
  await publishBlock(db, auth, 'home', undefined);
  const delivery = await createToken(db, { siteId, userId, name: 'front end', kind: 'delivery', scopes: ['site_blocks.view'] });
  return {
    deliveryToken: delivery.token,
    homeCategoryId: categoryId,
    homeTagId: tagId,
    summary: `a published page block "/" with 3 dataSource fields (latest, category ${categoryId}, tag ${tagId}; 10 contents each)`,
  };
}
