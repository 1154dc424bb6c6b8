import { execFileSync } from 'node:child_process';

/** The CLI and process tests run the built service (`dist/`), as users do: build it once first. */
export default function setup(): void {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}
