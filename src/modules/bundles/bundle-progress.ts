import type { Progress } from './bundle-manifest.js';
import type { GroupCounts } from './bundles.import.js';

/**
 * How the CLI shows a bundle's progress on stderr: a bar per group on a terminal, one plain line
 * per finished group otherwise, nothing with --json (stdout then holds only the one JSON object).
 */
export function progressPrinter(mode: 'tty' | 'plain' | 'silent', out: NodeJS.WritableStream = process.stderr): (p: Progress) => void {
  if (mode === 'silent') return () => {};
  if (mode === 'plain') return (p) => p.finished && out.write(`${p.group}: ${p.done}${p.total === undefined ? '' : `/${p.total}`}\n`);
  return (p) => {
    const width = 30;
    const share = p.total ? Math.min(1, p.done / p.total) : p.finished ? 1 : 0;
    const filled = Math.round(share * width);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
    out.write(`\r${p.group.padEnd(26)} ${bar} ${p.done}${p.total === undefined ? '' : `/${p.total}`}${p.finished ? '\n' : ''}`);
  };
}

/** The closing summary of an import: a line per group that has anything. */
export function importSummary(report: { siteId: string | null; dryRun: boolean; groups: Record<string, GroupCounts> }): string {
  const lines = Object.entries(report.groups)
    .filter(([, c]) => c.created + c.updated + c.unchanged > 0)
    .map(
      ([g, c]) =>
        `  ${g.padEnd(26)} ${String(c.created).padStart(7)} created ${String(c.updated).padStart(7)} updated ${String(c.unchanged).padStart(7)} unchanged`,
    );
  const total = Object.values(report.groups).reduce((n, c) => n + c.created + c.updated, 0);
  const head = report.dryRun
    ? `Dry run: the import would change ${total} records and files (nothing was written).`
    : `Imported into site ${report.siteId}: ${total} records and files created or updated.`;
  return [head, ...lines].join('\n');
}
