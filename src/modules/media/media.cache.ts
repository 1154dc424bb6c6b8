/**
 * The bytes of small stored files (variants, most originals) kept in memory, keyed by storage key
 * and ETag: a replace changes the ETag, so an old entry is never served; a deleted file's row is
 * gone before the cache is asked. Least recently used out past `maxBytes`.
 */
export class FileBytesCache {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;

  constructor(
    private readonly maxBytes = 64 * 1024 * 1024,
    /** Files larger than this are streamed from storage every time. */
    readonly maxFileBytes = 1024 * 1024,
  ) {}

  get(key: string, etag: string): Buffer | undefined {
    const id = `${key} ${etag}`;
    const hit = this.entries.get(id);
    if (hit) {
      this.entries.delete(id);
      this.entries.set(id, hit);
    }
    return hit;
  }

  set(key: string, etag: string, body: Buffer): void {
    if (body.length > this.maxFileBytes) return;
    const id = `${key} ${etag}`;
    const had = this.entries.get(id);
    if (had) this.bytes -= had.length;
    this.entries.set(id, body);
    this.bytes += body.length;
    for (const [oldest, value] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= value.length;
    }
  }
}
