import BetterSqlite3 from 'better-sqlite3';
import { rmSync, mkdirSync } from 'node:fs';
import { seedDatabase } from '../bench/seed.js';
import { ENDPOINTS } from '../bench/endpoints.js';
const dir = '/tmp/benchdb';
if (!process.env.KEEP) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await seedDatabase(`${dir}/cairn.db`, ENDPOINTS.filter((e) => e.name.includes('site-blocks')));
}
const db = new BetterSqlite3(`${dir}/cairn.db`);
if (process.env.OPT) db.pragma('optimize');
const site = db.prepare('select site_id from site_blocks limit 1').get() as any;
const SUMMARY = '"contents"."id", "contents"."title"';
const q = (filter: string) => `select ${SUMMARY} from "contents" where "contents"."site_id" = ? and "contents"."id" in (select "contents"."id" from "contents" where "contents"."site_id" = ? and "contents"."status" = ?${filter} order by "contents"."created_at" desc, "contents"."id" desc limit ? offset ?) order by "contents"."created_at" desc, "contents"."id" desc`;
const cat = ` and exists (select "cc"."content_id" from "content_categories" as "cc" where "cc"."content_id" = "contents"."id" and "cc"."category_id" in (?))`;
const tag = ` and exists (select "ct"."content_id" from "content_tags" as "ct" where "ct"."content_id" = "contents"."id" and "ct"."tag_id" in (?))`;
const block = db.prepare("select schema from site_blocks where path = '/'").get() as any;
const schema = JSON.parse(block.schema);
const catId = schema[3].filters.categoryIds[0];
const tagId = schema[4].filters.tagIds[0];
for (const [name, sql, args] of [
  ['latest', q(''), [site.site_id, site.site_id, 'published', 10, 0]],
  ['category', q(cat), [site.site_id, site.site_id, 'published', catId, 10, 0]],
  ['tag', q(tag), [site.site_id, site.site_id, 'published', tagId, 10, 0]],
  ['cats', 'select "cc"."content_id", "c"."id", "c"."name", "c"."slug" from "content_categories" as "cc" inner join "categories" as "c" on "c"."id" = "cc"."category_id" where "cc"."site_id" = ? and "cc"."content_id" in (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) order by "cc"."content_id", "cc"."position"', [site.site_id, 1,2,3,4,5,6,7,8,9,10]],
  ['tags', 'select "ct"."content_id", "t"."id", "t"."name", "t"."slug" from "content_tags" as "ct" inner join "tags" as "t" on "t"."id" = "ct"."tag_id" where "ct"."site_id" = ? and "ct"."content_id" in (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) order by "ct"."content_id", "ct"."position"', [site.site_id, 1,2,3,4,5,6,7,8,9,10]],
  ['block', 'select * from "site_blocks" where "site_id" = ? and "locale" = ? and "path" = ?', [site.site_id, 'en', '/']],
] as const) {
  const stmt = db.prepare(sql as string);
  console.log(name, (db.prepare(`explain query plan ${sql}`).all(...(args as any[])) as any[]).map((r) => r.detail).join(' | '));
  const t = performance.now();
  for (let i = 0; i < 200; i++) stmt.all(...(args as any[]));
  console.log(name, ((performance.now() - t) / 200).toFixed(3), 'ms');
}
