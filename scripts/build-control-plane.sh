#!/usr/bin/env bash
# Build a Kubernetes control plane from its Go modules, for `dra-migrate simulate`
# and the tests that need a real API server:
#
#   scripts/build-control-plane.sh [--print-dir]
#
# kube-apiserver, kube-scheduler and kube-controller-manager of Kubernetes
# $K8S_VERSION (k8s.io/kubernetes, every staging module k8s.io/X it requires as
# v0.0.0 replaced by k8s.io/X v0.MINOR.PATCH, the list read from kubernetes' own
# go.mod as the module proxy serves it) and etcd $ETCD_VERSION
# (go.etcd.io/etcd/server/v3, in a module of its own so that its dependencies
# are chosen as etcd chose them), built with `go build` in temporary modules
# outside the repository. Nothing is committed: the binaries are kept in
#
#   ${XDG_CACHE_HOME:-$HOME/.cache}/dra-migrate/control-plane/$K8S_VERSION/
#
# and that folder is printed on stdout (the last line; progress goes to stderr).
# A folder whose four binaries are present and report the expected versions is
# used as it is. --print-dir prints the folder without building anything.
#
# Environment:
#   K8S_VERSION   Kubernetes release (default v1.37.2)
#   ETCD_VERSION  etcd server release, v3.6 or newer (default v3.7.0, the etcd
#                 client kubernetes $K8S_VERSION requires)
#   GO            the go command (default: go); Go 1.26 or newer for 1.37
#   GOPROXY, GOFLAGS, GOCACHE, GOMODCACHE: as go reads them
#
# A cold build (empty module and build caches) takes about 25 minutes on two
# cores; with warm caches it is mostly linking (docs/architecture.md, the row of
# simulate/control_plane.py, has the measured figures).
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.0}"
GO="${GO:-go}"
# The cache folder as dra-migrate finds it (dra_migrate/cache.py): XDG_CACHE_HOME only
# when it is absolute, as the XDG specification says.
if [[ "${XDG_CACHE_HOME:-}" == /* ]]; then
    CACHE_ROOT="$XDG_CACHE_HOME/dra-migrate/control-plane"
else
    CACHE_ROOT="$HOME/.cache/dra-migrate/control-plane"
fi
DEST="$CACHE_ROOT/$K8S_VERSION"
KUBE_BINARIES=(kube-apiserver kube-scheduler kube-controller-manager)

log() { printf 'build-control-plane: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

case "${1:-}" in
    "") ;;
    --print-dir) printf '%s\n' "$DEST"; exit 0 ;;
    -h | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (usage: $0 [--print-dir])" ;;
esac

[[ "$K8S_VERSION" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] \
    || die "K8S_VERSION $K8S_VERSION is not a release like v1.37.2"
STAGING_VERSION="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
[[ "$ETCD_VERSION" =~ ^v3\.([0-9]+)\.[0-9]+$ ]] && (( BASH_REMATCH[1] >= 6 )) \
    || die "ETCD_VERSION $ETCD_VERSION is not an etcd release v3.6.0 or newer"

# present: the four binaries are in DEST and report the versions asked for.
present() {
    local bin
    for bin in "${KUBE_BINARIES[@]}"; do
        [[ -x "$DEST/$bin" ]] || return 1
        "$DEST/$bin" --version 2>/dev/null | grep -x >/dev/null "Kubernetes $K8S_VERSION" || return 1
    done
    [[ -x "$DEST/etcd" ]] || return 1
    "$DEST/etcd" --version 2>/dev/null | grep -x >/dev/null "etcd Version: ${ETCD_VERSION#v}" || return 1
}

mkdir -p "$CACHE_ROOT"
# One build at a time per cache folder (a second run waits, then finds it built).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE_ROOT/.lock"
    flock 9
fi

if present; then
    log "Kubernetes $K8S_VERSION and etcd $ETCD_VERSION already built in $DEST"
    printf '%s\n' "$DEST"
    exit 0
fi

command -v "$GO" >/dev/null 2>&1 || die "the go command is not found (install Go 1.26 or newer, or set GO)"
log "$("$GO" version)"

START=$SECONDS
WORK="$(mktemp -d "${TMPDIR:-/tmp}/build-control-plane.XXXXXX")"
OUT="$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")"
cleanup() { rm -rf "$WORK" "$OUT"; }
trap cleanup EXIT

# GOFLAGS=-mod=mod: the temporary modules are tidied here, whatever the caller's GOFLAGS say.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"
export GOWORK=off

# --- Kubernetes ----------------------------------------------------------------------------
log "resolving k8s.io/kubernetes@$K8S_VERSION"
mkdir -p "$WORK/kubernetes"
cd "$WORK/kubernetes"
"$GO" mod init dra-migrate.invalid/control-plane >/dev/null 2>&1
KUBE_GOMOD="$("$GO" mod download -json "k8s.io/kubernetes@$K8S_VERSION" \
    | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
[[ -f "$KUBE_GOMOD" ]] || die "the module proxy gave no go.mod for k8s.io/kubernetes@$K8S_VERSION"
# The staging modules: kubernetes requires each at v0.0.0 and replaces it with its
# staging/ folder; outside the repository each is the published k8s.io/X v0.MINOR.PATCH.
mapfile -t STAGING < <(awk '
    /^require[[:space:]]*\(/ { inside = 1; next }
    inside && /^\)/ { inside = 0; next }
    inside && $1 ~ /^k8s\.io\// && $2 == "v0.0.0" { print $1 }
    /^require[[:space:]]+k8s\.io\/[^[:space:]]+[[:space:]]+v0\.0\.0/ { print $2 }
' "$KUBE_GOMOD" | sort -u)
(( ${#STAGING[@]} > 0 )) || die "no staging module (k8s.io/X v0.0.0) in kubernetes' go.mod"
log "${#STAGING[@]} staging modules at $STAGING_VERSION"
for module in "${STAGING[@]}"; do
    "$GO" mod edit -replace "$module=$module@$STAGING_VERSION"
done
"$GO" mod edit -require "k8s.io/kubernetes@$K8S_VERSION"
cat >tools.go <<'GO'
//go:build tools

// The commands built; the build tag keeps this file out of every build.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
log "go mod tidy (kubernetes)"
"$GO" mod tidy >&2
# The version the binaries report (and /version serves), as kubernetes' own build sets it.
MINOR="${K8S_VERSION#v1.}"
MINOR="${MINOR%%.*}"
LDFLAGS=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    LDFLAGS+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$MINOR"
    LDFLAGS+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
log "go build ${KUBE_BINARIES[*]}"
"$GO" build -ldflags "$LDFLAGS" -o "$OUT/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kube-controller-manager >&2

# --- etcd, in a module of its own ---------------------------------------------------------
log "go build go.etcd.io/etcd/server/v3@$ETCD_VERSION"
mkdir -p "$WORK/etcd"
cd "$WORK/etcd"
"$GO" mod init dra-migrate.invalid/etcd >/dev/null 2>&1
"$GO" mod edit -require "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
cat >tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
"$GO" mod tidy >&2
"$GO" build -o "$OUT/etcd" go.etcd.io/etcd/server/v3 >&2

# --- check, then install --------------------------------------------------------------------
for bin in "${KUBE_BINARIES[@]}"; do
    "$OUT/$bin" --version | grep -x >/dev/null "Kubernetes $K8S_VERSION" \
        || die "$bin does not report Kubernetes $K8S_VERSION: $("$OUT/$bin" --version 2>&1 | head -1)"
done
"$OUT/etcd" --version | grep -x >/dev/null "etcd Version: ${ETCD_VERSION#v}" \
    || die "etcd does not report $ETCD_VERSION: $("$OUT/etcd" --version 2>&1 | head -1)"
mkdir -p "$DEST"
for bin in "${KUBE_BINARIES[@]}" etcd; do
    mv -f "$OUT/$bin" "$DEST/$bin"  # a rename: a reader sees the old binary or the new one
done
log "built in $((SECONDS - START)) s: $DEST"
printf '%s\n' "$DEST"
