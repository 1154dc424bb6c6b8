import type { Executor } from '../../db/types.js';
import { BUNDLE_TABLES } from './bundle-tables.js';
import { type BundleIdMapTable, saveIdMap, targetOf } from './bundles.repository.js';

/** How many translations an import keeps in memory: the rest are read again from `bundle_id_map` (indexed). */
const CACHE_SIZE = 20_000;
/** Translations made by this import, written to `bundle_id_map` in batches of this many. */
const FLUSH_SIZE = 500;

const UUID_TABLES = BUNDLE_TABLES.filter((s) => s.id === 'uuid').map((s) => s.table);
const SERIAL_TABLES = new Set(BUNDLE_TABLES.filter((s) => s.id === 'serial').map((s) => s.table));
/** Cache key of "a UUID of any UUID table" (text rewriting does not know the table). */
const ANY_UUID = '*uuid';
const MISSING = Symbol('missing');

/**
 * Which target record each source record became (decisions BX4), kept in the database, not in
 * memory: what this import makes is written to `bundle_id_map` in batches inside the import's
 * transaction (a dry run's are rolled back with it), and a lookup reads the table through a
 * cache of at most 2 × CACHE_SIZE recently used entries. So an import's memory does not grow with the
 * size of the site (issue 35: RSS flat), and a second import of a bundle starts without loading
 * every translation of the first (decisions BX10).
 */
export class IdMap {
  // Two generations (each at most CACHE_SIZE): a hit in the old one moves to the young one; when
  // the young one is full it becomes the old one. O(1) a lookup, unlike a Map kept in LRU order
  // (deleting its oldest entries leaves holes its iterator walks over again and again).
  private young = new Map<string, unknown>();
  private old = new Map<string, unknown>();
  private pending = new Map<string, BundleIdMapTable>();

  constructor(
    private readonly tx: Executor,
    private readonly siteId: string,
    private readonly sourceSiteId: string,
  ) {}

  private remembered(key: string): unknown {
    const value = this.young.get(key);
    if (value !== undefined) return value;
    const aged = this.old.get(key);
    if (aged !== undefined) this.keep(key, aged);
    return aged;
  }

  private keep(key: string, value: unknown) {
    if (this.young.size >= CACHE_SIZE && !this.young.has(key)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  private typed(table: string, target: string): unknown {
    return SERIAL_TABLES.has(table) ? Number(target) : target;
  }

  /** The target id of a source record of `table`, or undefined when no import made or met it. */
  async get(table: string, sourceId: string): Promise<unknown> {
    const key = `${table}\0${sourceId}`;
    const hit = this.remembered(key);
    if (hit !== undefined) return hit === MISSING ? undefined : hit;
    const found = await targetOf(this.tx, this.siteId, this.sourceSiteId, [table], [sourceId]);
    const value = found === undefined ? MISSING : this.typed(table, found);
    this.keep(key, value);
    return value === MISSING ? undefined : value;
  }

  /** The target's UUID for a source UUID of any bundled UUID record, or undefined. */
  async uuid(sourceId: string): Promise<string | undefined> {
    const lower = sourceId.toLowerCase();
    const key = `${ANY_UUID}\0${lower}`;
    const hit = this.remembered(key);
    if (hit !== undefined) return hit === MISSING ? undefined : (hit as string);
    const found = await targetOf(this.tx, this.siteId, this.sourceSiteId, UUID_TABLES, [sourceId, lower]);
    this.keep(key, found ?? MISSING);
    return found;
  }

  /** Notes (and, with `persist`, records) that the source record `sourceId` of `table` is the target's `target`. */
  async set(table: string, sourceId: string, target: unknown, persist = true): Promise<void> {
    const value = this.typed(table, String(target));
    // Written again when not known equal (an upsert): cheaper than asking the database first.
    if (persist && this.remembered(`${table}\0${sourceId}`) !== value) {
      this.pending.set(`${table}\0${sourceId}`, {
        site_id: this.siteId,
        source_site_id: this.sourceSiteId,
        table_name: table,
        source_id: sourceId,
        target_id: String(value),
      });
      if (this.pending.size >= FLUSH_SIZE) await this.flush();
    }
    this.keep(`${table}\0${sourceId}`, value);
    if (UUID_TABLES.includes(table)) this.keep(`${ANY_UUID}\0${sourceId.toLowerCase()}`, value);
  }

  /** Names a UUID's target before its record is written (a new media file's key names its own id); not recorded. */
  noteUuid(sourceId: string, target: string) {
    this.keep(`${ANY_UUID}\0${sourceId.toLowerCase()}`, target);
  }

  async flush(): Promise<void> {
    const rows = [...this.pending.values()];
    this.pending = new Map();
    for (let i = 0; i < rows.length; i += 200) await saveIdMap(this.tx, rows.slice(i, i + 200));
  }
}
