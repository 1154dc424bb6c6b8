import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createGzip } from 'node:zlib';
import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { dialectOf } from '../../db/dialect.js';
import { parseJson } from '../../db/json.js';
import type { Db } from '../../db/types.js';
import type { FileStorage } from '../../shared/storage.js';
import { getSite } from '../sites/sites.service.js';
import { originalKey, variantKey } from '../media/media.service.js';
import { fileKey as formFileKey, fileRefsOf } from '../forms/forms.files.js';
import { TarWriter } from './bundle-archive.js';
import { toBundleRow } from './bundle-rows.js';
import { BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION, BUNDLE_TABLES, type TableSpec, groupName } from './bundle-tables.js';
import { pageOfRows } from './bundles.repository.js';
import { CAIRN_VERSION, type Progress } from './bundle-manifest.js';

const PAGE = 1000;

export interface ExportDeps {
  db: Db;
  storage: FileStorage;
  /** The base media URLs of this instance start with (the import rewrites it to its own). */
  mediaPublicUrl: string;
}

export interface ExportSummary {
  siteId: string;
  file: string;
  bytes: number;
  groups: Record<string, { count: number }>;
}

/** The rows of one table of the site, in bundle form, page by page (parents before children where the table nests). */
async function* rowsOf(db: Db, spec: TableSpec, siteId: string): AsyncGenerator<Record<string, unknown>> {
  const dialect = dialectOf(db);
  const siteColumn = spec.siteColumn ?? 'site_id';
  if (spec.parent) {
    // Trees (categories, media folders) are small: read whole, written parents first.
    const all: Record<string, unknown>[] = [];
    for (let afterId: unknown; ; ) {
      const rows = await pageOfRows(db, spec.table, siteColumn, siteId, ['id'], { afterId, limit: PAGE });
      all.push(...rows);
      if (rows.length < PAGE) break;
      afterId = rows.at(-1)!.id;
    }
    const written = new Set<unknown>();
    let pending = all;
    while (pending.length) {
      const next = pending.filter((r) => r[spec.parent!] != null && !written.has(r[spec.parent!]) && all.some((p) => p.id === r[spec.parent!]));
      const ready = pending.filter((r) => !next.includes(r));
      if (!ready.length) throw new Error(`${spec.table} holds a cycle of parents`);
      for (const r of ready) {
        written.add(r.id);
        yield toBundleRow(spec, r, dialect);
      }
      pending = next;
    }
    return;
  }
  if (spec.id) {
    for (let afterId: unknown; ; ) {
      const rows = await pageOfRows(db, spec.table, siteColumn, siteId, ['id'], { afterId, limit: PAGE });
      for (const r of rows) yield toBundleRow(spec, r, dialect);
      if (rows.length < PAGE) return;
      afterId = rows.at(-1)!.id;
    }
  }
  if (spec.keyOrder) {
    // Keyset pages: an offset would read every earlier row again for each page (quadratic).
    const keys = spec.keyOrder;
    for (let after: unknown[] | undefined; ; ) {
      const rows = await pageOfRows(db, spec.table, siteColumn, siteId, keys, { after, limit: PAGE });
      for (const r of rows) yield toBundleRow(spec, r, dialect);
      if (rows.length < PAGE) return;
      after = keys.map((k) => rows.at(-1)![k]);
    }
  }
  const order = spec.natural?.[0]?.columns.length ? spec.natural[0].columns : [siteColumn];
  for (let offset = 0; ; offset += PAGE) {
    const rows = await pageOfRows(db, spec.table, siteColumn, siteId, order, { offset, limit: PAGE });
    for (const r of rows) yield toBundleRow(spec, r, dialect);
    if (rows.length < PAGE) return;
  }
}

/** The stored files of a media row: its original and its variants, as the archive names them. */
function filesOf(siteId: string, row: Record<string, unknown>): Array<{ key: string; name: string }> {
  const id = row.id as string;
  const widths = parseJson<number[]>(row.variant_widths, []);
  // Where the row says its objects are (a replaced file's are in a folder of their own).
  const original = (row.storage_key as string | null) ?? originalKey(siteId, id);
  return [{ key: original, name: `files/${id}/original` }, ...widths.map((w) => ({ key: variantKey(original, w), name: `files/${id}/w${w}` }))];
}

/**
 * Writes the bundle of a site to `file` (decisions BN1; layout in docs/site-bundles.md): each
 * table's rows are spooled to a temporary NDJSON file first (their counts and checksums go into
 * the manifest, which comes first in the archive), then the stored files are streamed from
 * storage straight into the archive, their checksums listed in a last entry. The archive appears
 * under its name only once complete.
 */
export async function exportSite(
  deps: ExportDeps,
  siteId: string,
  file: string,
  options: { withSubmissions?: boolean; onProgress?: (p: Progress) => void } = {},
): Promise<ExportSummary> {
  const site = await getSite(deps.db, siteId);
  const progress = options.onProgress ?? (() => {});
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-bundle-'));
  const partial = `${file}.partial-${randomUUID().slice(0, 8)}`;
  try {
    const specs = BUNDLE_TABLES.filter((s) => !s.optional || (s.optional === 'submissions' && options.withSubmissions));
    const groups: Record<string, { file: string; count: number; bytes: number; sha256: string }> = {};
    for (const spec of specs) {
      const name = groupName(spec.table);
      const out = createWriteStream(path.join(tmp, `${spec.table}.ndjson`));
      const hash = createHash('sha256');
      let count = 0;
      let bytes = 0;
      for await (const row of rowsOf(deps.db, spec, siteId)) {
        const line = `${JSON.stringify(row)}\n`;
        hash.update(line);
        bytes += Buffer.byteLength(line);
        count++;
        if (!out.write(line)) await once(out, 'drain');
        if (count % PAGE === 0) progress({ group: name, done: count });
      }
      out.end();
      await once(out, 'finish');
      groups[name] = { file: `data/${spec.table}.ndjson`, count, bytes, sha256: hash.digest('hex') };
      progress({ group: name, done: count, finished: true });
    }
    const manifest = {
      format: BUNDLE_FORMAT,
      formatVersion: BUNDLE_FORMAT_VERSION,
      cairnVersion: CAIRN_VERSION,
      createdAt: new Date().toISOString(),
      source: { siteId, name: site.name, domain: site.domain, mediaPublicUrl: deps.mediaPublicUrl },
      withSubmissions: !!options.withSubmissions,
      groups,
      files: { list: 'files.sha256' },
    };

    const gzip = createGzip({ level: 6 });
    const sink = createWriteStream(partial, { flags: 'wx' });
    gzip.pipe(sink);
    const sinkDone = once(sink, 'close');
    const tar = new TarWriter(gzip);
    const manifestText = `${JSON.stringify(manifest, null, 2)}\n`;
    await tar.add('manifest.json', Buffer.byteLength(manifestText), [manifestText]);
    for (const spec of specs) {
      const g = groups[groupName(spec.table)]!;
      await tar.add(g.file, g.bytes, createReadStream(path.join(tmp, `${spec.table}.ndjson`)));
    }
    // The stored files, each listed with its checksum and size in the last entry.
    const list = createWriteStream(path.join(tmp, 'files.sha256'));
    let fileCount = 0;
    let listBytes = 0;
    /** One stored file into the archive, and its line into `files.sha256`. */
    const archiveFile = async (name: string, found: NonNullable<Awaited<ReturnType<typeof deps.storage.read>>>) => {
      const sum = await tar.add(name, found.bytes, found.stream);
      const line = `${sum}  ${found.bytes}  ${name}\n`;
      listBytes += Buffer.byteLength(line);
      if (!list.write(line)) await once(list, 'drain');
      fileCount++;
    };
    for (let afterId: unknown; ; ) {
      const rows = await pageOfRows(deps.db, 'media_files', 'site_id', siteId, ['id'], { afterId, limit: PAGE });
      for (const row of rows) {
        for (const f of filesOf(siteId, row)) {
          const found = await deps.storage.read(f.key);
          if (!found) continue; // a variant not made (yet): the import's target makes it again on demand
          await archiveFile(f.name, found);
        }
        progress({ group: 'files', done: fileCount });
      }
      if (rows.length < PAGE) break;
      afterId = rows.at(-1)!.id;
    }
    // Files sent with form submissions (decisions BX11), as `files/forms/<form id>/<file id>`.
    const specOfSubmissions = specs.find((s) => s.table === 'form_submissions');
    for (let afterId: unknown; specOfSubmissions; ) {
      const rows = await pageOfRows(deps.db, 'form_submissions', 'site_id', siteId, ['id'], { afterId, limit: PAGE });
      for (const row of rows) {
        for (const ref of fileRefsOf(row.data)) {
          const found = await deps.storage.read(formFileKey(siteId, Number(row.form_id), ref.fileId));
          if (!found) continue; // a file deleted with its submission's files, or never committed
          await archiveFile(`files/forms/${Number(row.form_id)}/${ref.fileId}`, found);
        }
      }
      progress({ group: 'files', done: fileCount });
      if (rows.length < PAGE) break;
      afterId = rows.at(-1)!.id;
    }
    list.end();
    await once(list, 'finish');
    await tar.add('files.sha256', listBytes, createReadStream(path.join(tmp, 'files.sha256')));
    await tar.finish();
    await sinkDone;
    progress({ group: 'files', done: fileCount, finished: true });
    await fs.rename(partial, file);
    const bytes = (await fs.stat(file)).size;
    return {
      siteId,
      file,
      bytes,
      groups: { ...Object.fromEntries(Object.entries(groups).map(([k, g]) => [k, { count: g.count }])), files: { count: fileCount } },
    };
  } catch (err) {
    await fs.rm(partial, { force: true });
    throw err;
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}
