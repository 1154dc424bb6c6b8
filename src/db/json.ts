/** JSON columns are text on SQLite and jsonb on PostgreSQL; this is the one place both are read and written. */
export function parseJson<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined) return fallback;
  if (typeof value === 'string') {
    try {
      return JSON.parse(value) as T;
    } catch {
      return fallback;
    }
  }
  return value as T;
}

export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}

export function now(): string {
  return new Date().toISOString();
}
