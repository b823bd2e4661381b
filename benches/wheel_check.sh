#!/usr/bin/env bash
# Build the release wheel as the release workflow does and prove it is what a user without
# Rust can install:
#   - one abi3 manylinux_2_28 wheel (any CPython >= 3.11 on glibc >= 2.28), built without a
#     container: maturin build --zig, ziglang from PyPI, fat LTO (the `release` profile);
#   - auditwheel agrees it is manylinux_2_28 (it only links the libraries the policy allows);
#   - at most 30 MB (the model's graph comes from its own data-only package, not the wheel);
#   - installs into a fresh venv with no cargo or rustc on PATH and binary wheels only, in
#     at most 60 s;
#   - every package that install brings is memcore's, or required by one of its
#     requirements (nothing memcore does not use);
#   - README.md's quick start runs verbatim with it, offline (without any network at all
#     where `unshare -n` works), and `memcore --help` answers.
# The figures go to benches/results/wheel.json (python -m benches.docs_sync puts them in
# README.md and docs/install.md).
#
#   bash benches/wheel_check.sh [--no-build] [--wheel FILE] [--no-record]
#
# The fat-LTO build takes 10 to 15 minutes on 2 cores the first time; its artifacts go to
# $CARGO_TARGET_DIR/zig (default target/zig), apart from other builds. The tools (maturin,
# ziglang, auditwheel) are installed from PyPI into $WHEEL_TOOLS (default
# target/wheel-tools). Installing needs PyPI (or PIP_INDEX_URL / PIP_FIND_LINKS) for the
# dependencies; nothing else is fetched.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
MAX_MB=30
MAX_INSTALL_SECONDS=60
TAG=manylinux_2_28
BUILD=1
RECORD=1
WHEEL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --no-record) RECORD=0 ;;
    --wheel) WHEEL="$2"; shift ;;
    *) echo "usage: $0 [--no-build] [--wheel FILE] [--no-record]" >&2; exit 2 ;;
  esac
  shift
done

fail() { echo "FAIL: $*" >&2; exit 1; }
WORK="$(mktemp -d -t memcore-wheel-check.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
OUT="${WHEEL_OUT:-$TARGET/wheels-$TAG}"
TOOLS="${WHEEL_TOOLS:-$TARGET/wheel-tools}"

if [ ! -x "$TOOLS/bin/maturin" ] || [ ! -x "$TOOLS/bin/auditwheel" ]; then
  "$PY" -m venv "$TOOLS"
  "$TOOLS/bin/python" -m pip install -q --upgrade pip
  "$TOOLS/bin/python" -m pip install -q "maturin>=1.9.4,<2" ziglang auditwheel
fi
tool_versions="$("$TOOLS/bin/python" -c 'import importlib.metadata as m; print(", ".join(f"{n} {m.version(n)}" for n in ("maturin", "ziglang", "auditwheel")))')"

build="not built by this run (--wheel or --no-build)"
if [ -z "$WHEEL" ]; then
  if [ "$BUILD" = 1 ]; then
    rm -f "$OUT"/memcore_engine-*.whl
    started=$SECONDS
    # zig's clang, unlike gcc, does not take popcnt with SSE4.2: numkong (usearch's distance
    # kernels) needs it inside its AVX-512 functions. Every x86-64 CPU that runs a
    # manylinux_2_28 system has it. The release workflow builds in the manylinux container
    # with gcc and needs no such flag.
    (cd "$ROOT" && PATH="$TOOLS/bin:$PATH" CARGO_TARGET_DIR="$TARGET/zig" \
      CFLAGS_x86_64_unknown_linux_gnu=-mpopcnt CXXFLAGS_x86_64_unknown_linux_gnu=-mpopcnt \
      "$TOOLS/bin/maturin" build --release --locked --zig --compatibility "$TAG" \
        --interpreter "$PY" --out "$OUT")
    build="maturin build --release --zig ($tool_versions), fat LTO"
    # Seconds of this run: a clean build's, or only what changed since the last one.
    echo "build: $build, $((SECONDS - started)) s"
  fi
  WHEEL="$(ls -t "$OUT"/memcore_engine-*.whl | head -n 1)"
fi
name="$(basename "$WHEEL")"
bytes="$(stat -c %s "$WHEEL")"
echo "wheel: $name ($((bytes / 1024)) KiB)"

case "$name" in *-cp311-abi3-${TAG}_*) ;; *) fail "$name is not an abi3 $TAG wheel" ;; esac
[ "$bytes" -le $((MAX_MB * 1024 * 1024)) ] || fail "$name is over $MAX_MB MB"

# auditwheel reads the extension's ELF: the libraries it links and the symbol versions it
# needs, against the manylinux policies.
"$TOOLS/bin/auditwheel" show "$WHEEL" | tee "$WORK/auditwheel.txt"
grep -q "consistent with the following platform tag: \"${TAG}_x86_64\"" "$WORK/auditwheel.txt" \
  || fail "auditwheel does not find $name consistent with ${TAG}_x86_64"
audit_tag="consistent with ${TAG}_x86_64"

# A PATH without any Rust toolchain: the venv, then the system's own folders only.
"$PY" -m venv "$WORK/venv"
CLEAN_PATH="$WORK/venv/bin:/usr/local/bin:/usr/bin:/bin"
if PATH="$CLEAN_PATH" command -v cargo >/dev/null || PATH="$CLEAN_PATH" command -v rustc >/dev/null; then
  fail "cargo or rustc is on the clean PATH ($CLEAN_PATH); the check would prove nothing"
fi
started=$SECONDS
env -u CARGO_HOME -u RUSTUP_HOME PATH="$CLEAN_PATH" \
  "$WORK/venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary :all: "$WHEEL"
install_seconds=$((SECONDS - started))
echo "install: $install_seconds s"
[ "$install_seconds" -le "$MAX_INSTALL_SECONDS" ] \
  || fail "pip install took $install_seconds s (at most $MAX_INSTALL_SECONDS)"

# Every installed distribution must be memcore-engine or in the closure of its requirements.
"$WORK/venv/bin/python" - > "$WORK/packages.json" <<'PY'
import importlib.metadata as md
import json
import re

try:
    from packaging.requirements import Requirement
except ImportError:  # not among the dependencies: pip's own copy
    from pip._vendor.packaging.requirements import Requirement

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

installed = {norm(d.metadata["Name"]): d for d in md.distributions()}
# (name, extra) pairs: a requirement such as mcp's pyjwt[crypto] brings pyjwt's "crypto"
# requirements too.
seen, todo, why = set(), [("memcore-engine", "")], {"memcore-engine": None}
while todo:
    name, extra = todo.pop()
    if (name, extra) in seen or name not in installed:
        continue
    seen.add((name, extra))
    for raw in installed[name].requires or []:
        req = Requirement(raw)
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        if extra and req.marker is None:
            continue  # an unconditional requirement: already taken with extra ""
        child = norm(req.name)
        why.setdefault(child, name)
        todo += [(child, "")] + [(child, e) for e in sorted(req.extras)]
needed = {name for name, _ in seen}
tooling = {"pip", "setuptools"}  # what `python -m venv` puts there
unused = sorted(set(installed) - needed - tooling)
packages = [
    {"name": installed[n].metadata["Name"], "version": installed[n].version, "required_by": why.get(n)}
    for n in sorted(needed - {"memcore-engine"})
]
print(json.dumps({"unused": unused, "packages": packages}))
PY
unused="$("$PY" -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["unused"]))' "$WORK/packages.json")"
[ -z "$unused" ] || fail "installed but not required by memcore or its requirements: $unused"
echo "packages: $("$PY" -c 'import json,sys; p=json.load(open(sys.argv[1]))["packages"]; print(len(p), "besides memcore-engine and pip, each required by memcore or a requirement of it")' "$WORK/packages.json")"

# README.md's quick start, from an empty folder (memcore comes from the venv), offline.
# `unshare -n` gives it a network namespace with no interface at all, where permitted.
OFFLINE=()
if unshare -rn true 2>/dev/null; then OFFLINE=(unshare -rn); fi
quick="$(cd "$WORK" && env -u CARGO_HOME -u RUSTUP_HOME PATH="$CLEAN_PATH" \
  "${OFFLINE[@]}" "$WORK/venv/bin/python" "$ROOT/benches/quickstart.py" "$ROOT/README.md")" \
  || fail "the README's quick start failed"
echo "$quick${OFFLINE:+ (no network interface: ${OFFLINE[*]})}"
quick_seconds="$(echo "$quick" | sed -n 's/.* in \([0-9.]*\) s$/\1/p')"
PATH="$CLEAN_PATH" "$WORK/venv/bin/memcore" --help >/dev/null
version="$("$WORK/venv/bin/python" -c 'import memcore; print(memcore.__version__)')"

if [ "$RECORD" = 1 ]; then
  "$PY" - "$ROOT/benches/results/wheel.json" "$WORK/packages.json" <<PY
import json, platform, sys, datetime
out, packages = sys.argv[1], json.load(open(sys.argv[2]))["packages"]
cpu = "unknown CPU"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break
record = {
    "date": datetime.date.today().isoformat(),
    "machine": f"$(nproc) cores, {cpu}, Python {platform.python_version()}",
    "version": "$version",
    "name": "$name",
    "tag": "${TAG}_x86_64",
    "bytes": $bytes,
    "mb": round($bytes / 1e6, 1),
    "max_mb": $MAX_MB,
    "build": "$build",
    "auditwheel": "$audit_tag",
    "install_seconds": $install_seconds,
    "max_install_seconds": $MAX_INSTALL_SECONDS,
    "quickstart_seconds": float("$quick_seconds"),
    "offline": "${OFFLINE[*]:-HF_HUB_OFFLINE, proxies closed}",
    "packages": packages,
}
with open(out, "w") as f:
    json.dump(record, f, indent=1)
    f.write("\n")
print(f"recorded {out}")
PY
fi
echo "OK: $name installs without Rust in $install_seconds s and runs the quick start offline"
