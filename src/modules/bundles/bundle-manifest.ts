import { readFileSync } from 'node:fs';

/** The version of this Cairn, written into every bundle it makes. */
export const CAIRN_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** How far an export or import is: rows (or files) of a group done so far. */
export interface Progress {
  group: string;
  done: number;
  total?: number;
  finished?: boolean;
}

export interface BundleManifest {
  format: string;
  formatVersion: number;
  cairnVersion: string;
  createdAt: string;
  source: { siteId: string; name: string; domain: string; mediaPublicUrl: string };
  withSubmissions: boolean;
  groups: Record<string, { file: string; count: number; bytes: number; sha256: string }>;
  files: { list: string };
}
