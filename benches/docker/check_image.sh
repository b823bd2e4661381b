#!/usr/bin/env bash
# Check the Docker image for real on a machine without a Docker engine (or Docker Hub):
# build the Dockerfile's runtime stage with buildah (chroot isolation, vfs storage) on a
# Debian base made locally with debootstrap, with a wheel built here standing in for the
# builder stage; then start the image with its own ENTRYPOINT and get tools/list from it over
# stdio, and see that MEMCORE_TRANSPORT=http selects HTTP.
#
#   bash benches/docker/check_image.sh
#
# Environment: MEMCORE_WHEEL (use this wheel instead of building one), MEMCORE_WHEEL_PROFILE
# (cargo profile of the wheel: release, the image's own, by default; ci is much faster),
# MEMCORE_CHECK_WORK (work folder, kept between runs so the base image is made once),
# HOST_CA_BUNDLE (CA certificates the base trusts; default: this machine's), DEBIAN_MIRROR,
# MATURIN. Exits 0 with "skipped: ..." when buildah or debootstrap is absent.
set -euo pipefail

if ! command -v buildah >/dev/null 2>&1; then
  echo "skipped: buildah not installed"
  exit 0
fi

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="${MEMCORE_CHECK_WORK:-${TMPDIR:-/tmp}/memcore-image-check}"
BASE_IMAGE="localhost/memcore-check-base:bookworm"
IMAGE="localhost/memcore:check"
BUILDAH=(buildah --root "$WORK/storage" --runroot "$WORK/run" --storage-driver vfs)
step() { printf '\n== %s (%ss)\n' "$1" "$SECONDS"; }
mkdir -p "$WORK"

step "wheel (stands in for the builder stage)"
CONTEXT="$WORK/builder"
rm -rf "$CONTEXT" && mkdir -p "$CONTEXT/wheels"
if [ -n "${MEMCORE_WHEEL:-}" ]; then
  cp "$MEMCORE_WHEEL" "$CONTEXT/wheels/"
else
  (cd "$ROOT" && "${MATURIN:-maturin}" build --profile "${MEMCORE_WHEEL_PROFILE:-release}" \
    --locked --out "$CONTEXT/wheels")
fi
ls "$CONTEXT/wheels"

step "local Debian base image"
if ! "${BUILDAH[@]}" inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
  if ! command -v debootstrap >/dev/null 2>&1; then
    echo "skipped: debootstrap not installed (needed to make the base image)"
    exit 0
  fi
  rootfs="$WORK/rootfs"
  rm -rf "$rootfs"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    bookworm "$rootfs" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  # The base trusts what this machine trusts, so pip in the build gets through a
  # TLS-inspecting egress proxy (a stock base would fail on its certificate).
  cp "${HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}" "$rootfs/etc/ssl/certs/ca-certificates.crt"
  tar -C "$rootfs" -cf "$WORK/rootfs.tar" .
  base="$("${BUILDAH[@]}" from scratch)"
  "${BUILDAH[@]}" add "$base" "$WORK/rootfs.tar" /
  "${BUILDAH[@]}" config --cmd /bin/bash "$base"
  "${BUILDAH[@]}" commit --rm "$base" "$BASE_IMAGE"
  rm -rf "$rootfs" "$WORK/rootfs.tar"
fi

step "build the runtime stage of the Dockerfile"
"${BUILDAH[@]}" build --isolation chroot --layers --target runtime \
  --build-arg PYTHON_IMAGE="$BASE_IMAGE" --build-context builder="$CONTEXT" \
  -f "$ROOT/Dockerfile" -t "$IMAGE" "$ROOT"

step "image configuration"
"${BUILDAH[@]}" inspect --type image "$IMAGE" >"$WORK/image.json"
ENTRYPOINT=()
while IFS= read -r word; do ENTRYPOINT+=("$word"); done < <(
  python3 - "$WORK/image.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))["OCIv1"]["config"]
assert config["User"] == "memcore", config["User"]
assert "/data" in config.get("Volumes", {}), config.get("Volumes")
assert "MEMCORE_DATA_DIR=/data" in config["Env"], config["Env"]
assert config["Entrypoint"] == ["python", "-m", "memcore.mcp"], config["Entrypoint"]
print("\n".join(config["Entrypoint"]))
PY
)
echo "user memcore, volume /data, entrypoint: ${ENTRYPOINT[*]}"

container="$("${BUILDAH[@]}" from "$IMAGE")"
trap '"${BUILDAH[@]}" rm "$container" >/dev/null 2>&1 || true' EXIT

step "start the image: tools/list over stdio"
handshake() {
  printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"check","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
  sleep "${MEMCORE_CHECK_MODEL_WAIT:-10}" # the model loads in the background meanwhile
  printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_status","arguments":{}}}'
  sleep 1
}
replies="$WORK/replies.jsonl"
handshake | "${BUILDAH[@]}" run --isolation chroot "$container" -- "${ENTRYPOINT[@]}" \
  >"$replies" 2>"$WORK/server.log"
python3 - "$replies" <<'PY'
import json, sys
replies = {r.get("id"): r for r in map(json.loads, open(sys.argv[1]))}
tools = [t["name"] for t in replies[2]["result"]["tools"]]
assert "store_memory" in tools and "get_status" in tools, tools
status = json.loads(replies[3]["result"]["content"][0]["text"])
assert status["store"]["status"] == "open", status
print("tools/list:", ", ".join(tools))
print("store:", status["store"]["path"], "| embedding:", status["embedding"])
PY

step "MEMCORE_TRANSPORT=http selects HTTP (and needs a token file there)"
set +e
"${BUILDAH[@]}" run --isolation chroot --env MEMCORE_TRANSPORT=http "$container" -- \
  "${ENTRYPOINT[@]}" </dev/null >"$WORK/http.out" 2>&1
status=$?
set -e
cat "$WORK/http.out"
if [ "$status" -ne 2 ] || ! grep -q "token file /data/tokens.json does not exist" "$WORK/http.out"; then
  echo "FAILED: expected the HTTP transport to ask for its token file (exit 2), got $status"
  exit 1
fi

step "ok: the image answers tools/list over stdio"
