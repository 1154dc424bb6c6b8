import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { createGunzip } from 'node:zlib';
import { Readable } from 'node:stream';
import { dialectOf } from '../../db/dialect.js';
import type { Db, Executor } from '../../db/types.js';
import { emitEvent } from '../../jobs/outbox.js';
import type { SecretBox } from '../../shared/secrets.js';
import { mediaPrefix, type FileStorage } from '../../shared/storage.js';
import { objectsDir } from '../media/media.service.js';
import { createSite, getSite } from '../sites/sites.service.js';
import { generateSecret } from '../webhooks/webhooks.delivery.js';
import { fileKey as formFileKey } from '../forms/forms.files.js';
import { BundleError, ndjson, readAll, readTar, type TarEntry } from './bundle-archive.js';
import type { BundleManifest, Progress } from './bundle-manifest.js';
import { IdMap } from './bundle-id-map.js';
import { columnsOf, stableJson, toBundleRow, toDbValue } from './bundle-rows.js';
import {
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_VERSION,
  BUNDLE_TABLES,
  type BundleRow,
  DATA_SOURCE_IDS,
  groupName,
  type NaturalKey,
  type TableSpec,
} from './bundle-tables.js';
import { deleteSite, findRow, insertRow, updateRow } from './bundles.repository.js';

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
  /** Where it goes on the target (planFiles, inside the import's transaction); null when its record is not there. */
  target?: { key: string; status: keyof GroupCounts | null } | null;
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
 * What an import knows while it runs: which target record each source record became (IdMap:
 * in the database, read through a bounded cache), and the counts per group.
 */
class ImportRun {
  readonly ids: IdMap;
  readonly groups: Record<string, GroupCounts> = {};
  /** Media records this import made or changed (source id -> created/updated): their files are written. */
  readonly mediaStatus = new Map<string, keyof GroupCounts>();
  /** The folder each media record's objects go to, from its storage key (a replaced file's is a folder of its own). */
  readonly mediaDirs = new Map<string, string>();
  private readonly dialect;
  private readonly sameSite: boolean;
  private readonly sourceSite: string;

  constructor(
    private readonly tx: Executor,
    readonly siteId: string,
    private readonly manifest: BundleManifest,
    private readonly deps: ImportDeps,
  ) {
    this.dialect = dialectOf(tx);
    this.sameSite = manifest.source.siteId === siteId;
    this.sourceSite = manifest.source.siteId.toLowerCase();
    this.ids = new IdMap(tx, siteId, manifest.source.siteId);
  }

  /** The target's UUID for a source UUID (the site, or a bundled UUID record), or the UUID itself. */
  private async uuidOf(uuid: string): Promise<string> {
    if (uuid.toLowerCase() === this.sourceSite) return this.siteId;
    return (await this.ids.uuid(uuid)) ?? uuid;
  }

  /** A text with the source's ids and media base replaced by the target's. */
  private async rewrite(value: unknown): Promise<unknown> {
    if (typeof value === 'string') {
      let text = value;
      const from = this.manifest.source.mediaPublicUrl;
      if (from && from !== this.deps.mediaPublicUrl && text.includes(from)) text = text.split(`${from}/files/`).join(`${this.deps.mediaPublicUrl}/files/`);
      const found = text.match(UUID);
      if (!found) return text;
      const targets = new Map<string, string>();
      for (const uuid of found) if (!targets.has(uuid)) targets.set(uuid, await this.uuidOf(uuid));
      return text.replace(UUID, (m) => targets.get(m) ?? m);
    }
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const v of value) out.push(await this.rewrite(v));
      return out;
    }
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = await this.rewrite(v);
      return out;
    }
    return value;
  }

  /** Integer ids (one or a list) as the target's; ids of records not in the bundle are dropped (undefined for a single one). */
  private async translated(ids: unknown, table: string): Promise<unknown> {
    if (Array.isArray(ids)) {
      const out: unknown[] = [];
      for (const id of ids) {
        const mapped = await this.ids.get(table, String(id));
        if (mapped !== undefined) out.push(mapped);
      }
      return out;
    }
    return ids == null ? ids : await this.ids.get(table, String(ids));
  }

  /** A JSON object's integer ids (a snapshot's `categoryIds`) as the target's; ids of records not in the bundle are dropped. */
  private async translateJsonIds(value: unknown, keys: Record<string, string>): Promise<unknown> {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const [key, table] of Object.entries(keys)) if (out[key] != null) out[key] = (await this.translated(out[key], table)) ?? null;
    return out;
  }

  /**
   * The ids in the filters of every dataSource field of a JSON value (a field schema, or an
   * object holding one: a published snapshot) as the target's (DATA_SOURCE_IDS): a contents
   * list of category 3 lists the target's copy of category 3. Non-integer values (`parentId: 'null'`) stay.
   */
  private async translateDataSources(value: unknown): Promise<unknown> {
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const v of value) out.push(await this.translateDataSources(v));
      return out;
    }
    if (!value || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await this.translateDataSources(v);
    const keys = out.type === 'dataSource' && typeof out.source === 'string' ? DATA_SOURCE_IDS[out.source] : undefined;
    if (keys && out.filters && typeof out.filters === 'object' && !Array.isArray(out.filters)) {
      const filters = { ...(out.filters as Record<string, unknown>) };
      for (const [key, table] of Object.entries(keys)) {
        const ids = filters[key];
        if (Array.isArray(ids)) filters[key] = await this.translated(ids.filter(Number.isInteger), table);
        else if (Number.isInteger(ids)) {
          const mapped = await this.translated(ids, table);
          if (mapped === undefined) delete filters[key];
          else filters[key] = mapped;
        }
      }
      out.filters = filters;
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
      const known = (await this.ids.get(spec.table, sourceId)) ?? (this.sameSite ? source.id : undefined);
      if (known !== undefined) existing = await findRow(this.tx, spec.table, siteColumn, this.siteId, { id: known });
    }
    // A new UUID record's id is chosen now, so that its own values (a media file's storage key) can name it.
    const newUuid = spec.id === 'uuid' && !existing ? randomUUID() : undefined;
    if (newUuid) this.ids.noteUuid(sourceId!, newUuid);

    const values: BundleRow = {};
    for (const [column] of columnsOf(spec)) {
      const target = spec.refs?.[column];
      const v = source[column];
      if (target && v != null) {
        const mapped = await this.ids.get(target, String(v));
        if (mapped === undefined && spec.required?.includes(column)) return; // what it belongs to is not in the bundle
        values[column] = mapped ?? null;
      } else values[column] = await this.rewrite(v ?? null);
    }
    for (const [column, keys] of Object.entries(spec.jsonRefs ?? {})) values[column] = await this.translateJsonIds(values[column], keys);
    for (const column of spec.dataSources ?? []) values[column] = await this.translateDataSources(values[column]);
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
      if (sourceId !== undefined) await this.ids.set(spec.table, sourceId, existing.id);
      const current = toBundleRow(spec, existing, this.dialect);
      const changed = Object.fromEntries(
        columnsOf(spec)
          .filter(([c]) => stableJson(current[c]) !== stableJson(values[c]))
          .map(([c, kind]) => [c, toDbValue(values[c], kind, this.dialect)]),
      );
      if (!Object.keys(changed).length) return this.count(group, 'unchanged');
      await updateRow(this.tx, spec.table, siteColumn, this.siteId, where!, changed);
      if (spec.table === 'media_files') this.mediaStatus.set(sourceId!, 'updated');
      return this.count(group, 'updated');
    }
    if (spec.siteColumn === 'id') return; // the site itself is never made here
    const row: Record<string, unknown> = { site_id: this.siteId };
    if (newUuid) row.id = newUuid;
    for (const [c, kind] of columnsOf(spec)) row[c] = toDbValue(values[c], kind, this.dialect);
    if (spec.onInsert === 'webhook-secret') row.secret = this.deps.secrets.encrypt(generateSecret());
    const id = await insertRow(this.tx, spec.table, row, !!spec.id);
    if (sourceId !== undefined) await this.ids.set(spec.table, sourceId, spec.id === 'uuid' ? newUuid : id);
    if (spec.table === 'media_files') this.mediaStatus.set(sourceId!, 'created');
    this.count(group, 'created');
  }
}

/** The second pass: the bundle's rows, group by group, into the target inside `tx`. */
async function applyRows(run: ImportRun, file: string, manifest: BundleManifest, progress: (p: Progress) => void) {
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
      if (++done % 500 === 0) progress({ group, done, total });
    }
    await run.ids.flush();
    progress({ group, done, total, finished: true });
  }
  await entries.return(undefined);
}

const FORM_FILE = /^files\/forms\/(\d+)\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/**
 * The key a staged file goes to, and what happened to it: a media file goes with its media
 * record (created or updated with it); a form submission's file (`files/forms/<form>/<file id>`,
 * decisions BX11) under the target's form, keeping its file id (the submission's data names it).
 * Null for a file whose record is not on the target.
 */
async function fileKey(run: ImportRun, name: string): Promise<{ key: string; status: keyof GroupCounts | null } | null> {
  const form = FORM_FILE.exec(name);
  if (form) {
    const target = await run.ids.get('forms', form[1]!);
    return target === undefined ? null : { key: formFileKey(run.siteId, Number(target), form[2]!), status: null };
  }
  const [, sourceId, rest] = name.split('/');
  const target = await run.ids.get('media_files', sourceId!);
  if (target === undefined || !rest) return null;
  // In the folder the row's storage key names, if it is the record's own (never another record's or site's).
  const own = mediaPrefix(run.siteId, String(target));
  const dir = run.mediaDirs.get(sourceId!);
  const folder = dir && (dir === own || (dir.startsWith(`${own}/`) && !dir.includes('..'))) ? dir : own;
  return { key: `${folder}/${rest}`, status: run.mediaStatus.get(sourceId!) ?? 'unchanged' };
}

/**
 * One `site.imported` event for an import that changed something (decisions BX12), written in
 * its transaction: subscribers learn that the site changed wholesale, without an event for each
 * of the thousands of records it wrote.
 */
async function announceImport(tx: Executor, run: ImportRun, manifest: BundleManifest) {
  const total = (what: keyof GroupCounts) => Object.values(run.groups).reduce((n, c) => n + c[what], 0);
  const [created, updated, unchanged] = [total('created'), total('updated'), total('unchanged')];
  if (!created && !updated) return;
  await emitEvent(tx, run.siteId, 'site.imported', {
    sourceSiteId: manifest.source.siteId,
    bundleCreatedAt: manifest.createdAt,
    formatVersion: manifest.formatVersion,
    created,
    updated,
    unchanged,
    groups: run.groups,
  });
}

/** Each staged file's key on the target, looked up while the import's translations are readable (in its transaction). */
async function planFiles(run: ImportRun, files: Map<string, StagedFile>) {
  for (const [name, staged] of files) staged.target = await fileKey(run, name);
}

/** Files go to their keys once the rows are committed; a file of an unchanged record is written only if the target lacks it. */
async function placeFiles(run: ImportRun, storage: FileStorage, files: Map<string, StagedFile>, dryRun: boolean, progress: (p: Progress) => void) {
  const counts = (run.groups.files = { created: 0, updated: 0, unchanged: 0 });
  let done = 0;
  for (const staged of files.values()) {
    const target = staged.target;
    let outcome: keyof GroupCounts | null = null;
    if (target) {
      outcome = target.status;
      if (outcome === 'unchanged' || outcome === null) {
        const present = await storage.read(target.key, { start: 0, end: 0 });
        if (present) present.stream.destroy();
        // A submission's file has no record of its own: created when the target lacks it.
        if (outcome === null) outcome = !present ? 'created' : present.bytes !== staged.bytes ? 'updated' : 'unchanged';
        else if (!present || present.bytes !== staged.bytes) outcome = 'updated';
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
        await planFiles(run, files);
        if (dryRun) throw new DryRunDone();
        await announceImport(tx, run, manifest);
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
      await deps.storage.deletePrefix(`private/forms/${siteId}/`).catch(() => {});
    }
    throw err;
  }
}
