import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { createGunzip } from 'node:zlib';
import { Readable } from 'node:stream';
import { dialectOf } from '../../db/dialect.js';
import type { Db, Executor } from '../../db/types.js';
import type { SecretBox } from '../../shared/secrets.js';
import { mediaPrefix, type FileStorage } from '../../shared/storage.js';
import { objectsDir } from '../media/media.service.js';
import { createSite, getSite } from '../sites/sites.service.js';
import { generateSecret } from '../webhooks/webhooks.delivery.js';
import { BundleError, ndjson, readAll, readTar, type TarEntry } from './bundle-archive.js';
import type { BundleManifest, Progress } from './bundle-manifest.js';
import { columnsOf, stableJson, toBundleRow, toDbValue } from './bundle-rows.js';
import { BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION, BUNDLE_TABLES, type BundleRow, groupName, type NaturalKey, type TableSpec } from './bundle-tables.js';
import { type BundleIdMapTable, deleteSite, findRow, idMapOf, insertRow, saveIdMap, updateRow } from './bundles.repository.js';

export interface ImportDeps {
  db: Db;
  storage: FileStorage;
  secrets: SecretBox;
  mediaPublicUrl: string;
}

export interface ImportOptions {
  /** An existing site to import into; without it a new site is made (`name`, `domain` default to the bundle's). */
  into?: string;
  name?: string;
  domain?: string;
  dryRun?: boolean;
  onProgress?: (p: Progress) => void;
}

export interface GroupCounts {
  created: number;
  updated: number;
  unchanged: number;
}

export interface ImportReport {
  /** The target site; null for a dry run of `--new` (no site is kept). */
  siteId: string | null;
  dryRun: boolean;
  groups: Record<string, GroupCounts>;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function openArchive(file: string): Readable {
  const gunzip = createGunzip();
  createReadStream(file)
    .on('error', (err) => gunzip.destroy(new BundleError(`cannot read ${file}: ${err.message}`)))
    .pipe(gunzip);
  return gunzip;
}

interface StagedFile {
  bytes: number;
  tempKey?: string;
}

interface Verified {
  manifest: BundleManifest;
  files: Map<string, StagedFile>;
}

async function hashOf(body: AsyncIterable<Buffer>, each?: (chunk: Buffer) => void): Promise<{ sha256: string; lines: number; bytes: number }> {
  const hash = createHash('sha256');
  let lines = 0;
  let bytes = 0;
  for await (const chunk of body) {
    hash.update(chunk);
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
    each?.(chunk);
  }
  return { sha256: hash.digest('hex'), lines, bytes };
}

function readManifest(text: string): BundleManifest {
  let manifest: BundleManifest;
  try {
    manifest = JSON.parse(text) as BundleManifest;
  } catch {
    throw new BundleError('the bundle manifest is not JSON');
  }
  if (manifest?.format !== BUNDLE_FORMAT) throw new BundleError('not a Cairn site bundle (its manifest names another format)');
  if (!Number.isInteger(manifest.formatVersion)) throw new BundleError('the bundle manifest has no format version');
  if (manifest.formatVersion > BUNDLE_FORMAT_VERSION)
    throw new BundleError(
      `the bundle has format version ${manifest.formatVersion} (made by Cairn ${manifest.cairnVersion}); this Cairn reads versions up to ${BUNDLE_FORMAT_VERSION}: upgrade Cairn to import it`,
    );
  const known = new Set(BUNDLE_TABLES.map((s) => groupName(s.table)));
  for (const group of Object.keys(manifest.groups ?? {}))
    if (!known.has(group)) throw new BundleError(`the bundle holds a group this Cairn does not know: ${group}`);
  return manifest;
}

/**
 * The first pass: every entry is read and checked against the manifest (sizes, line counts,
 * SHA-256 of each group and of each stored file) before anything is written. With `storage`, the
 * files are streamed to temporary keys meanwhile (discarded again if any check fails).
 */
async function verifyBundle(file: string, storage: FileStorage | null): Promise<Verified> {
  const files = new Map<string, StagedFile>();
  const sums = new Map<string, string>();
  const seen = new Set<string>();
  let manifest: BundleManifest | undefined;
  let listed: string | undefined;
  try {
    for await (const entry of readTar(openArchive(file))) {
      if (!manifest) {
        if (entry.name !== 'manifest.json') throw new BundleError('not a Cairn site bundle (no manifest first)');
        manifest = readManifest((await readAll(entry.body)).toString('utf8'));
        continue;
      }
      if (entry.name.startsWith('data/')) {
        const group = Object.entries(manifest.groups).find(([, g]) => g.file === entry.name);
        if (!group) throw new BundleError(`the bundle holds ${entry.name}, which its manifest does not list`);
        const got = await hashOf(entry.body);
        const [name, want] = group;
        if (got.sha256 !== want.sha256 || got.bytes !== want.bytes) throw new BundleError(`checksum mismatch in group ${name} (${entry.name})`);
        if (got.lines !== want.count) throw new BundleError(`group ${name} holds ${got.lines} rows, its manifest says ${want.count}`);
        seen.add(name);
      } else if (entry.name.startsWith('files/')) {
        const staged: StagedFile = { bytes: entry.size };
        files.set(entry.name, staged);
        const hash = createHash('sha256');
        const tee = (async function* () {
          for await (const chunk of entry.body) {
            hash.update(chunk);
            yield chunk;
          }
        })();
        if (storage) staged.tempKey = (await storage.upload(asReadable(tee))).tempKey;
        else
          for await (const _ of tee) {
          }
        sums.set(entry.name, hash.digest('hex'));
      } else if (entry.name === manifest.files?.list) {
        listed = (await readAll(entry.body, 1 << 30)).toString('utf8');
      } else throw new BundleError(`the bundle holds an unknown entry ${entry.name}`);
    }
    if (!manifest) throw new BundleError('the archive is empty');
    for (const group of Object.keys(manifest.groups)) if (!seen.has(group)) throw new BundleError(`the bundle lacks group ${group}`);
    if (listed === undefined) throw new BundleError('the bundle lacks its list of files');
    const lines = listed.split('\n').filter(Boolean);
    for (const line of lines) {
      const [sum, bytes, name] = line.split('  ');
      if (!name || !sums.has(name)) throw new BundleError(`the bundle lacks the file ${name ?? line}`);
      if (sums.get(name) !== sum || files.get(name)!.bytes !== Number(bytes)) throw new BundleError(`checksum mismatch in ${name}`);
    }
    if (lines.length !== files.size) throw new BundleError('the bundle holds files its list does not name');
    return { manifest, files };
  } catch (err) {
    if (storage) await discardAll(storage, files);
    throw err instanceof BundleError ? err : new BundleError(`the archive is damaged (${(err as Error).message})`);
  }
}

async function discardAll(storage: FileStorage, files: Map<string, StagedFile>) {
  for (const f of files.values()) if (f.tempKey) await storage.discard(f.tempKey).catch(() => {});
}

/** A stream of the generator's chunks; Readable.from pulls only as fast as the consumer reads. */
const asReadable = (source: AsyncIterable<Buffer>): Readable => Readable.from(source, { objectMode: false });

class DryRunDone extends Error {}

/**
 * What an import knows while it runs: which target record each source record became (loaded
 * from earlier imports, grown as rows are written), and the counts per group.
 */
class ImportRun {
  readonly maps = new Map<string, Map<string, unknown>>();
  /** Source UUIDs (the site, users, roles, media, folders, sitemap entries) -> the target's: every text is rewritten through it. */
  readonly uuids = new Map<string, string>();
  readonly groups: Record<string, GroupCounts> = {};
  readonly mediaStatus = new Map<string, keyof GroupCounts>();
  /** The folder each media record's objects go to, from its storage key (a replaced file's is a folder of its own). */
  readonly mediaDirs = new Map<string, string>();
  private pending: BundleIdMapTable[] = [];
  private readonly dialect;
  private readonly sameSite: boolean;

  constructor(
    private readonly tx: Executor,
    readonly siteId: string,
    private readonly manifest: BundleManifest,
    private readonly deps: ImportDeps,
  ) {
    this.dialect = dialectOf(tx).name;
    this.sameSite = manifest.source.siteId === siteId;
    this.uuids.set(manifest.source.siteId.toLowerCase(), siteId);
  }

  async load() {
    for (const m of await idMapOf(this.tx, this.siteId, this.manifest.source.siteId)) this.remember(m.table_name, m.source_id, m.target_id, false);
  }

  private mapOf(table: string) {
    let m = this.maps.get(table);
    if (!m) this.maps.set(table, (m = new Map()));
    return m;
  }

  private remember(table: string, sourceId: string, targetId: unknown, persist = true) {
    const spec = BUNDLE_TABLES.find((s) => s.table === table);
    const value = spec?.id === 'serial' ? Number(targetId) : targetId;
    if (this.mapOf(table).get(sourceId) === value) return;
    this.mapOf(table).set(sourceId, value);
    if (spec?.id === 'uuid') this.uuids.set(sourceId.toLowerCase(), String(value));
    if (persist)
      this.pending.push({
        site_id: this.siteId,
        source_site_id: this.manifest.source.siteId,
        table_name: table,
        source_id: sourceId,
        target_id: String(value),
      });
  }

  async flush() {
    const rows = this.pending;
    this.pending = [];
    for (let i = 0; i < rows.length; i += 200) await saveIdMap(this.tx, rows.slice(i, i + 200));
  }

  /** A text with the source's ids and media base replaced by the target's. */
  private rewrite(value: unknown): unknown {
    if (typeof value === 'string') {
      let text = value;
      const from = this.manifest.source.mediaPublicUrl;
      if (from && from !== this.deps.mediaPublicUrl && text.includes(from)) text = text.split(`${from}/files/`).join(`${this.deps.mediaPublicUrl}/files/`);
      return text.replace(UUID, (m) => this.uuids.get(m.toLowerCase()) ?? m);
    }
    if (Array.isArray(value)) return value.map((v) => this.rewrite(v));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.rewrite(v)]));
    return value;
  }

  /** A JSON object's integer ids (a snapshot's `categoryIds`) as the target's; ids of records not in the bundle are dropped. */
  private translateJsonIds(value: unknown, keys: Record<string, string>): unknown {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const [key, table] of Object.entries(keys)) {
      const ids = out[key];
      const map = this.mapOf(table);
      if (Array.isArray(ids)) out[key] = ids.map((id) => map.get(String(id))).filter((id) => id !== undefined);
      else if (ids != null) out[key] = map.get(String(ids)) ?? null;
    }
    return out;
  }

  count(group: string, what: keyof GroupCounts) {
    this.groups[group] ??= { created: 0, updated: 0, unchanged: 0 };
    this.groups[group][what]++;
  }

  /** Writes one bundle row into the target: the record it already is (earlier import, or natural key), updated when it differs, else a new one. */
  async apply(spec: TableSpec, source: BundleRow): Promise<void> {
    const siteColumn = spec.siteColumn ?? 'site_id';
    const group = groupName(spec.table);
    const sourceId = spec.id ? String(source.id) : undefined;
    let existing: Record<string, unknown> | undefined;
    if (sourceId !== undefined) {
      // A site's own bundle (a backup restored in place) names its records by their own ids.
      const known = this.mapOf(spec.table).get(sourceId) ?? (this.sameSite ? source.id : undefined);
      if (known !== undefined) existing = await findRow(this.tx, spec.table, siteColumn, this.siteId, { id: known });
    }
    // A new UUID record's id is chosen now, so that its own values (a media file's storage key) can name it.
    const newUuid = spec.id === 'uuid' && !existing ? randomUUID() : undefined;
    if (newUuid) this.uuids.set(sourceId!.toLowerCase(), newUuid);

    const values: BundleRow = {};
    for (const [column] of columnsOf(spec)) {
      const target = spec.refs?.[column];
      const v = source[column];
      if (target && v != null) {
        const mapped = this.mapOf(target).get(String(v));
        if (mapped === undefined && spec.required?.includes(column)) return; // what it belongs to is not in the bundle
        values[column] = mapped ?? null;
      } else values[column] = this.rewrite(v ?? null);
    }
    for (const [column, keys] of Object.entries(spec.jsonRefs ?? {})) values[column] = this.translateJsonIds(values[column], keys);
    spec.derive?.(values);
    if (spec.table === 'media_files' && typeof values.storage_key === 'string') this.mediaDirs.set(sourceId!, objectsDir(values.storage_key));

    let where: Record<string, unknown> | undefined = existing ? { id: existing.id } : undefined;
    if (!existing) {
      // A table without an id and without natural keys holds one row a site (its settings).
      const keys = spec.natural?.length || spec.id ? (spec.natural ?? []) : [{ columns: [] as string[] }];
      for (const key of keys as NaturalKey[]) {
        const probe = { ...source, ...values };
        if (key.when && !key.when(probe)) continue;
        const naturalWhere = Object.fromEntries(key.columns.map((c) => [c, spec.matchOnly?.[c] ? probe[c] : (values[c] ?? null)]));
        existing = await findRow(this.tx, spec.table, siteColumn, this.siteId, naturalWhere);
        if (existing) {
          where = spec.id ? { id: existing.id } : naturalWhere;
          break;
        }
      }
    }
    if (existing) {
      if (sourceId !== undefined) this.remember(spec.table, sourceId, existing.id);
      if (spec.table === 'media_files') this.mediaStatus.set(sourceId!, 'unchanged');
      const current = toBundleRow(spec, existing, this.dialect);
      const changed = Object.fromEntries(
        columnsOf(spec)
          .filter(([c]) => stableJson(current[c]) !== stableJson(values[c]))
          .map(([c, kind]) => [c, toDbValue(values[c], kind)]),
      );
      if (!Object.keys(changed).length) return this.count(group, 'unchanged');
      await updateRow(this.tx, spec.table, siteColumn, this.siteId, where!, changed);
      if (spec.table === 'media_files') this.mediaStatus.set(sourceId!, 'updated');
      return this.count(group, 'updated');
    }
    if (spec.siteColumn === 'id') return; // the site itself is never made here
    const row: Record<string, unknown> = { site_id: this.siteId };
    if (newUuid) row.id = newUuid;
    for (const [c, kind] of columnsOf(spec)) row[c] = toDbValue(values[c], kind);
    if (spec.onInsert === 'webhook-secret') row.secret = this.deps.secrets.encrypt(generateSecret());
    const id = await insertRow(this.tx, spec.table, row, !!spec.id);
    if (sourceId !== undefined) this.remember(spec.table, sourceId, spec.id === 'uuid' ? newUuid : id);
    if (spec.table === 'media_files') this.mediaStatus.set(sourceId!, 'created');
    this.count(group, 'created');
  }
}

/** The second pass: the bundle's rows, group by group, into the target inside `tx`. */
async function applyRows(run: ImportRun, file: string, manifest: BundleManifest, progress: (p: Progress) => void) {
  await run.load();
  const byFile = new Map(BUNDLE_TABLES.map((s) => [`data/${s.table}.ndjson`, s]));
  for (const spec of BUNDLE_TABLES) if (manifest.groups[groupName(spec.table)]) run.groups[groupName(spec.table)] = { created: 0, updated: 0, unchanged: 0 };
  const entries: AsyncGenerator<TarEntry> = readTar(openArchive(file));
  for await (const entry of entries) {
    if (entry.name.startsWith('files/')) break; // the rows come first; files were staged by the first pass
    const spec = byFile.get(entry.name);
    if (!spec) continue;
    const group = groupName(spec.table);
    const total = manifest.groups[group]!.count;
    let done = 0;
    for await (const row of ndjson(entry.body)) {
      await run.apply(spec, row);
      if (++done % 500 === 0) {
        await run.flush();
        progress({ group, done, total });
      }
    }
    await run.flush();
    progress({ group, done, total, finished: true });
  }
  await entries.return(undefined);
}

/** The key a staged file goes to: the media record it belongs to, on the target. */
function fileKey(run: ImportRun, name: string): { key: string; status: keyof GroupCounts } | null {
  const [, sourceId, rest] = name.split('/');
  const target = run.maps.get('media_files')?.get(sourceId!);
  if (target === undefined || !rest) return null;
  // In the folder the row's storage key names, if it is the record's own (never another record's or site's).
  const own = mediaPrefix(run.siteId, String(target));
  const dir = run.mediaDirs.get(sourceId!);
  const folder = dir && (dir === own || (dir.startsWith(`${own}/`) && !dir.includes('..'))) ? dir : own;
  return { key: `${folder}/${rest}`, status: run.mediaStatus.get(sourceId!) ?? 'unchanged' };
}

/** Files go to their keys once the rows are committed; a file of an unchanged record is written only if the target lacks it. */
async function placeFiles(run: ImportRun, storage: FileStorage, files: Map<string, StagedFile>, dryRun: boolean, progress: (p: Progress) => void) {
  const counts = (run.groups.files = { created: 0, updated: 0, unchanged: 0 });
  let done = 0;
  for (const [name, staged] of files) {
    const target = fileKey(run, name);
    let outcome: keyof GroupCounts | null = null;
    if (target) {
      outcome = target.status;
      if (outcome === 'unchanged') {
        const present = await storage.read(target.key, { start: 0, end: 0 });
        if (present) present.stream.destroy();
        if (!present || present.bytes !== staged.bytes) outcome = 'updated';
      }
      if (!dryRun && staged.tempKey && outcome !== 'unchanged') {
        await storage.promote(staged.tempKey, target.key);
        staged.tempKey = undefined;
      }
      counts[outcome]++;
    }
    if (staged.tempKey) await storage.discard(staged.tempKey);
    staged.tempKey = undefined;
    if (++done % 100 === 0) progress({ group: 'files', done, total: files.size });
  }
  progress({ group: 'files', done, total: files.size, finished: true });
}

/**
 * Imports a bundle (decisions BN1): checked whole first (nothing is written for a damaged,
 * tampered or newer bundle), then every row in one transaction, ids and references translated
 * to the target's, then the files promoted from their temporary keys. A dry run does the same
 * in a transaction it rolls back, so its counts are exact, and writes no file.
 */
export async function importBundle(deps: ImportDeps, file: string, options: ImportOptions = {}): Promise<ImportReport> {
  const progress = options.onProgress ?? (() => {});
  const dryRun = !!options.dryRun;
  if (options.into) await getSite(deps.db, options.into);
  const { manifest, files } = await verifyBundle(file, dryRun ? null : deps.storage);
  let siteId = options.into;
  let madeSite = false;
  try {
    if (!siteId) {
      const made = await createSite(deps.db, { name: options.name ?? manifest.source.name, domain: options.domain ?? manifest.source.domain });
      siteId = made.id;
      madeSite = true;
    }
    const target = siteId;
    let run!: ImportRun;
    try {
      await deps.db.transaction().execute(async (tx) => {
        run = new ImportRun(tx, target, manifest, deps);
        await applyRows(run, file, manifest, progress);
        if (dryRun) throw new DryRunDone();
      });
    } catch (err) {
      if (!(err instanceof DryRunDone)) throw err;
    }
    await placeFiles(run, deps.storage, files, dryRun, progress);
    if (dryRun && madeSite) await deleteSite(deps.db, target);
    return { siteId: dryRun && madeSite ? null : target, dryRun, groups: run.groups };
  } catch (err) {
    await discardAll(deps.storage, files);
    // A site this import made goes again, with any file already placed; an existing site keeps a
    // committed import, and running the import again places the files it lacks.
    if (madeSite && siteId) {
      await deleteSite(deps.db, siteId).catch(() => {});
      await deps.storage.deletePrefix(`media/${siteId}/`).catch(() => {});
    }
    throw err;
  }
}
