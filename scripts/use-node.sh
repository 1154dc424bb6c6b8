# Sourced, not run: `source scripts/use-node.sh 22` puts that Node major first on PATH for the rest
# of the shell (decisions NV5). The machine's own Node may be older than the project's engines
# (Debian's is 20, past its end of life, and better-sqlite3 13 needs Node-API 10, which Node 20
# lacks), so CI and the Node-version runs take Node from the npm registry's `node` package: its
# preinstall fetches `node-<os>-<arch>`, binary and C headers, so node-gyp builds native modules
# against those headers with no download from nodejs.org.
#
# The install lives in CAIRN_NODE_HOME (default ~/.cache/cairn-node) under the major's name and is
# reused while it still holds that major; `npm` stays the machine's own npm, run by this Node.
cairn_node_major=${1:?usage: source scripts/use-node.sh <major>}
cairn_node_dir="${CAIRN_NODE_HOME:-$HOME/.cache/cairn-node}/$cairn_node_major"
if ! "$cairn_node_dir/node_modules/node/bin/node" -e "process.exit(process.versions.node.split('.')[0] === '$cairn_node_major' ? 0 : 1)" 2>/dev/null; then
  rm -rf "$cairn_node_dir"
  mkdir -p "$cairn_node_dir"
  # The package's preinstall is what installs the binary, so it is allowed by name (npm 11 runs no
  # dependency script that allowScripts does not list).
  printf '{ "private": true, "allowScripts": { "node": true } }\n' >"$cairn_node_dir/package.json"
  npm install --prefix "$cairn_node_dir" --no-audit --no-fund --no-save --loglevel=error "node@$cairn_node_major" >/dev/null
fi
export PATH="$cairn_node_dir/node_modules/node/bin:$PATH"
node -e "process.exit(process.versions.node.split('.')[0] === '$cairn_node_major' ? 0 : 1)" \
  || { echo "use-node.sh: the node package did not install Node $cairn_node_major" >&2; return 1; }
npm_config_nodedir="$cairn_node_dir/node_modules/node/node_modules/node-$(node -p 'process.platform + "-" + process.arch')"
export npm_config_nodedir
# node-gyp compiles with one job unless told: the native builds are most of an install (NV3).
export JOBS="${JOBS:-max}"
unset cairn_node_major cairn_node_dir
echo "node $(node -v) from the npm registry's node package (npm $(npm -v))"
