import { sql } from 'kysely';
import type { Executor } from '../../db/types.js';
import { isRaster, VARIANT_NAMES } from './media.images.js';

/**
 * Which contents and site blocks use a media file (issue 10, item 7; decisions M15). A use is a
 * file URL of the site anywhere in a source's field (`/files/<site>/<file id>/...`, on whatever
 * public base or CDN, any `?w=`): the featured image and the body of contents (images, links), the
 * data of site blocks (image and file fields). Kept on write, in the writer's transaction.
 */
export interface MediaReferencesTable {
  site_id: string;
  media_id: string;
  content_id: number | null;
  site_block_id: number | null;
  field: string;
}

declare module '../../db/types.js' {
  interface DB {
    media_references: MediaReferencesTable;
  }
}

export type ReferenceSource = { contentId: number } | { siteBlockId: number };

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/**
 * The ids of this site's file URLs in `text` (each once); with `bareIds`, also every id standing as
 * a JSON string of its own (an image or file field may hold `"<id>"` or `{ "id": "<id>" }`).
 */
export function mediaIdsIn(siteId: string, text: string | null | undefined, bareIds = false): string[] {
  if (!text) return [];
  const found = new Set<string>();
  if (text.includes('/files/')) for (const m of text.matchAll(new RegExp(`/files/${siteId}/(${UUID})/`, 'gi'))) found.add(m[1]!.toLowerCase());
  if (bareIds) for (const m of text.matchAll(new RegExp(`"(${UUID})"`, 'gi'))) found.add(m[1]!.toLowerCase());
  return [...found];
}

const sourceColumn = (s: ReferenceSource) => ('contentId' in s ? (['content_id', s.contentId] as const) : (['site_block_id', s.siteBlockId] as const));

/**
 * Replaces the files a source's fields use (`fields`: field name -> its text; fields not named
 * keep theirs). Only ids of this site's files are kept: a URL of a file that does not exist
 * references nothing. Site blocks' data is JSON whose image and file fields may hold bare ids.
 */
export async function setMediaReferences(
  db: Executor,
  siteId: string,
  source: ReferenceSource,
  fields: Record<string, string | null | undefined>,
  fresh = false,
) {
  const bareIds = 'siteBlockId' in source;
  const [column, id] = sourceColumn(source);
  const names = Object.keys(fields);
  if (!names.length) return;
  // A source inserted in this transaction (`fresh`) has no references yet.
  if (!fresh) await db.deleteFrom('media_references').where('site_id', '=', siteId).where(column, '=', id).where('field', 'in', names).execute();
  const wanted = names.flatMap((field) => mediaIdsIn(siteId, fields[field], bareIds).map((mediaId) => ({ field, mediaId })));
  if (!wanted.length) return;
  const existing = new Set(
    (
      await db
        .selectFrom('media_files')
        .select('id')
        .where('site_id', '=', siteId)
        .where(
          'id',
          'in',
          wanted.map((w) => w.mediaId),
        )
        .execute()
    ).map((r) => r.id),
  );
  const rows = wanted
    .filter((w) => existing.has(w.mediaId))
    .map((w) => ({ site_id: siteId, media_id: w.mediaId, field: w.field, content_id: null, site_block_id: null, [column]: id }));
  if (rows.length) await db.insertInto('media_references').values(rows).execute();
}

/** How many contents and site blocks use a file. */
export async function countReferences(db: Executor, siteId: string, mediaId: string): Promise<{ contents: number; siteBlocks: number }> {
  const r = await db
    .selectFrom('media_references')
    .select((eb) => [eb.fn.count<number>('content_id').distinct().as('contents'), eb.fn.count<number>('site_block_id').distinct().as('siteBlocks')])
    .where('site_id', '=', siteId)
    .where('media_id', '=', mediaId)
    .executeTakeFirstOrThrow();
  return { contents: Number(r.contents), siteBlocks: Number(r.siteBlocks) };
}

/** The contents and site blocks that use a file, contents first, each once: `{ type, id, title }` (spec "Media reference record"). */
export async function listReferences(db: Executor, siteId: string, mediaId: string) {
  const rows = await db
    .selectFrom('media_references as r')
    .leftJoin('contents as c', (j) => j.onRef('c.id', '=', 'r.content_id').on('c.site_id', '=', siteId))
    .leftJoin('site_blocks as b', (j) => j.onRef('b.id', '=', 'r.site_block_id').on('b.site_id', '=', siteId))
    .select(['r.content_id', 'r.site_block_id', 'c.title as content_title', 'b.name as block_name'])
    .where('r.site_id', '=', siteId)
    .where('r.media_id', '=', mediaId)
    // Contents first (the null-ordering of the two databases differs, a boolean does not).
    .orderBy(sql`r.content_id is null`)
    .orderBy('r.content_id')
    .orderBy('r.site_block_id')
    .execute();
  // A source using the file in two fields is listed once.
  const seen = new Set<string>();
  const out: Array<{ type: 'content' | 'siteBlock'; id: number; title: string }> = [];
  for (const r of rows) {
    const ref =
      r.content_id !== null
        ? { type: 'content' as const, id: Number(r.content_id), title: r.content_title ?? '' }
        : { type: 'siteBlock' as const, id: Number(r.site_block_id), title: r.block_name ?? '' };
    if (seen.has(`${ref.type}:${ref.id}`)) continue;
    seen.add(`${ref.type}:${ref.id}`);
    out.push(ref);
  }
  return out;
}

/**
 * The variants of a featured image that is a raster file of this site (decisions N9): its URL
 * (as the content stores it, on whatever base) with `?w=` of each width; null for any other URL.
 * No query unless the URL is one of the site's file URLs.
 */
export async function variantsOfFileUrl(db: Executor, siteId: string, url: string | null) {
  const [mediaId] = mediaIdsIn(siteId, url);
  if (!mediaId || !url) return null;
  const file = await db.selectFrom('media_files').select('mime_type').where('site_id', '=', siteId).where('id', '=', mediaId).executeTakeFirst();
  if (!file || !isRaster(file.mime_type)) return null;
  const base = url.replace(/[?#].*$/, '');
  const v = VARIANT_NAMES;
  return { thumbnail: `${base}?w=${v.thumbnail}`, card: `${base}?w=${v.card}`, content: `${base}?w=${v.content}`, medium: `${base}?w=${v.medium}` };
}
