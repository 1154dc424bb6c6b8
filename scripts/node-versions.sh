#!/usr/bin/env bash
# Runs the install and the test suite (SQLite) on another Node major, as users run it (decisions NV1, NV2, NV5):
#
#   bash scripts/node-versions.sh 22 [vitest arguments...]
#
# The Node binary comes from the npm registry's `node` package (its preinstall fetches the
# platform's `node-<os>-<arch>` package, binary and C headers). The project is copied, without
# node_modules, to a temporary directory and installed there with `npm ci` under that Node, so the
# native modules (better-sqlite3, re2; sharp's N-API binary needs no build) are built for its ABI
# and the shared node_modules is never touched. The install must be silent: any `npm warn` line
# (EBADENGINE above all) fails the run. Everything lives under one temporary directory, removed at
# the end; NODE_VERSIONS_KEEP=1 keeps it for a look.
set -euo pipefail
cd "$(dirname "$0")/.."

major=${1:?usage: node-versions.sh <major> [vitest arguments...]}
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/cairn-node${major}-XXXXXX")
[ "${NODE_VERSIONS_KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT

# 1. Node itself, from the npm registry's `node` package (scripts/use-node.sh), in this run's own
#    directory: PATH and npm_config_nodedir point at it for the rest of the script, so npm runs on
#    it too and node-gyp builds the native modules against its own headers.
CAIRN_NODE_HOME="$work/node" source scripts/use-node.sh "$major"

# 2. A copy of the project as CI checked it out (tracked and new files, nothing ignored).
mkdir -p "$work/app"
git ls-files -z --cached --others --exclude-standard | grep -zv '^node_modules$' | tar --null -T - -cf - | tar -xf - -C "$work/app"

# 3. A clean install under that Node.
cd "$work/app"
npm ci --no-audit --no-fund --prefer-offline 2>&1 | tee "$work/install.log"
if grep -E '^npm (warn|WARN|error|ERR)' "$work/install.log"; then
  echo "npm ci on Node $major was not silent (above)" >&2
  exit 1
fi

# 4. The suite on SQLite, as `npm test` runs it (CI's SQLite run). The typed client's test imports
#    openapi-fetch from the root, which npm ci installed; nothing else outside the copy is needed.
node -e "console.log('tests on', process.version, 'ABI', process.versions.modules)"
npm test -- "$@"
