"""Export and import a store as JSON Lines (``memcore export`` / ``memcore import``).

Every record type moves with its ids, times and links, so an import rebuilds the same
store: memories with their validity and supersession, entities, observation versions,
relations, memory-entity mentions, turns with their procedures and document versions,
code chunks, and the projects' index status.

The file (format version 2), one JSON object per line, streamed both ways:

- a header: ``{"type": "header", "format": "memcore-export", "version": 2,
  "memcore_version", "exported_at", "namespace" (null: every namespace),
  "with_vectors", "vector_encoding", "embedding": {"model", "dim"} | null, "kinds"}``;
- the records, each ``{"type": <kind>, ...}`` with every field under the engine's name,
  kinds in the order an import must replay them (memory, entity, observation, relation,
  mention, turn, code_chunk), then ``project`` (a code project's status row);
- an end line ``{"type": "end", "counts": {kind: records}}``, whose absence tells a
  truncated file from a complete one.

Times are ISO 8601 in UTC with microseconds (``2026-01-31T12:00:00.000000Z``), exact to
the microsecond the store keeps; on import an integer is taken as microseconds. Fields the
store keeps as JSON text (a memory's ``metadata``, a procedure's ``args``) are written
verbatim, so they come back byte for byte. With ``--with-vectors`` each embedded record
carries ``vector_b64``: base64 of its little-endian float32 vector (exact and a third the
size of a list of decimal floats).

Vectors on import: a file's vectors are used when the target store has the same
embedding model (or none yet, which then takes the file's); otherwise, and for files
without vectors, records are embedded with the target's model when it has one, so an
export also moves a store to another model.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from memcore import __version__
from memcore._facade.base import native_engine
from memcore._time import from_micros, now_micros, to_micros
from memcore.errors import MemcoreError, NotFoundError

if TYPE_CHECKING:
    from memcore._core import Engine
    from memcore.memory import Memory

FORMAT = "memcore-export"
VERSION = 2
#: Versions this module reads (1: memories only, metadata as a JSON value).
READABLE_VERSIONS = (1, 2)
VECTOR_ENCODING = "f32le-base64"
#: Records per export page and per restore batch (one transaction each).
BATCH = 500
#: The pseudo-kind of a code project's status row (not an engine export kind).
PROJECT = "project"

#: Time fields (integer microseconds in the store) of each kind.
TIME_FIELDS: dict[str, tuple[str, ...]] = {
    "memory": (
        "event_time",
        "created_at",
        "updated_at",
        "accessed_at",
        "valid_from",
        "valid_until",
        "invalidated_at",
        "expires_at",
    ),
    "entity": ("created_at", "updated_at", "valid_from", "valid_until"),
    "observation": ("timestamp", "valid_from", "valid_until"),
    "relation": ("created_at", "valid_from", "valid_until"),
    "turn": ("created_at",),
    "code_chunk": ("indexed_at",),
    PROJECT: ("started_at", "completed_at", "updated_at"),
}


class TransferError(Exception):
    """The file cannot be imported; the message says why and where.

    Attributes:
        field: The field the store refused, when it named one (``"id"``: a record that
            exists already, which ``skip_existing`` would keep).
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


# -- export ----------------------------------------------------------------------------------


def export_store(
    memory: Memory,
    out: IO[str],
    *,
    namespace: str | None = None,
    with_vectors: bool = False,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, int]:
    """Write the store (or one namespace) to ``out``; the number of records of each kind.

    Args:
        memory: The open store.
        out: A text stream.
        namespace: Only this namespace (None: all of them).
        with_vectors: Also write each record's embedding.
        progress: Called with (kind, records written) after each page.
    """
    engine = native_engine(memory)
    if namespace is not None:
        engine.check_served(namespace)  # a subset node: not an empty export of another's
    kinds = list(engine.export_kinds())
    identity = engine.embedding_identity()
    header = {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "memcore_version": __version__,
        "exported_at": _iso(now_micros()),
        "namespace": namespace,
        "with_vectors": with_vectors,
        "vector_encoding": VECTOR_ENCODING if with_vectors else None,
        "embedding": None if identity is None else {"model": identity[0], "dim": identity[1]},
        "kinds": [*kinds, PROJECT],
    }
    _write(out, header)
    counts: dict[str, int] = {}
    namespaces: set[str] = set()
    for kind in kinds:
        counts[kind] = 0
        for page in _pages(engine, kind, namespace, with_vectors):
            for record in page:
                if isinstance(record.get("namespace"), str):
                    namespaces.add(record["namespace"])
                _write(out, exported(kind, record))
            counts[kind] += len(page)
            if progress is not None:
                progress(kind, len(page))
    counts[PROJECT] = 0
    for ns in sorted({namespace} if namespace is not None else namespaces):
        for row in engine.list_projects(ns):
            _write(out, exported(PROJECT, row))
            counts[PROJECT] += 1
    _write(out, {"type": "end", "counts": counts})
    return counts


def _pages(
    engine: Engine, kind: str, namespace: str | None, with_vectors: bool
) -> Iterator[list[dict[str, Any]]]:
    after = ""
    while True:
        page = engine.export_page(
            kind, namespace=namespace, after=after, limit=BATCH, with_vectors=with_vectors
        )
        if page:
            yield page
        if len(page) < BATCH:
            return
        last = page[-1]
        # Mentions have no id of their own: their cursor is the pair they link.
        after = f"{last['memory_id']}\t{last['entity_id']}" if kind == "mention" else last["id"]


def exported(kind: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """A record as written to the file: ``type`` first, ISO times, base64 vector."""
    out: dict[str, Any] = {"type": kind}
    out.update((k, v) for k, v in record.items() if k not in ("type", "vector"))
    _convert_times(out, kind, _iso)
    vector = record.get("vector")
    if vector is not None:
        out["vector_b64"] = base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()
    return out


def _write(out: IO[str], value: Mapping[str, Any]) -> None:
    out.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")


# -- import ----------------------------------------------------------------------------------


@dataclass
class ImportReport:
    """What an import did.

    Attributes:
        read: Records read from the file, by kind.
        restored: Records written.
        skipped: Records already present (with ``skip_existing``), never embedded.
        embedded: Records written with vectors computed by the target's model.
        notes: Things the user should know (vectors dropped or replaced).
    """

    read: dict[str, int] = field(default_factory=dict)
    restored: int = 0
    skipped: int = 0
    embedded: int = 0
    notes: list[str] = field(default_factory=list)


def import_store(
    memory: Memory,
    lines: Iterable[bytes],
    *,
    skip_existing: bool = False,
    into: str | None = None,
    embed: bool = True,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Restore an export into ``memory``, a batch (one transaction) at a time.

    Args:
        memory: The open, writable store.
        lines: The file's lines, as bytes.
        skip_existing: Skip records whose id is already stored instead of failing.
        into: Put every record into this namespace.
        embed: Embed records that arrive without a usable vector.
        progress: Called with the bytes of each line read.

    Raises:
        TransferError: Not an export, a malformed line, a batch the store refused
            (earlier batches stay imported), or a truncated file.
    """
    reader = _lines(lines, progress)
    header = _header(next(reader, None))
    version = int(header["version"])
    batch = _Batch(memory, header, skip_existing=skip_existing, embed=embed)
    known = set(native_engine(memory).export_kinds())
    projects: list[dict[str, Any]] = []
    end: dict[str, Any] | None = None
    for number, record in reader:
        kind = record.get("type")
        if end is not None:
            raise TransferError(f"line {number}: records after the end line")
        if kind == "end":
            end = record
            continue
        if kind not in known and kind != PROJECT:
            raise TransferError(
                f"line {number}: record type {kind!r} is not supported by memcore {__version__}"
            )
        row = imported(str(kind), record, version=version, into=into, line=number)
        batch.report.read[str(kind)] = batch.report.read.get(str(kind), 0) + 1
        if kind == PROJECT:
            projects.append(row)
        else:
            batch.add(number, row)
    batch.flush()
    report = batch.report
    _restore_projects(memory, projects, skip_existing, report)
    if version >= 2:
        _check_end(end, report)
    return report


def imported(
    kind: str, record: Mapping[str, Any], *, version: int, into: str | None, line: int
) -> dict[str, Any]:
    """A file record as the engine restores it: integer times, a float32 vector."""
    out = dict(record)
    try:
        _convert_times(out, kind, _micros)
        encoded = out.pop("vector_b64", None)
        if encoded is not None:
            out["vector"] = np.frombuffer(base64.b64decode(encoded, validate=True), dtype="<f4")
    except (MemcoreError, ValueError, TypeError) as exc:
        raise TransferError(f"line {line}: {exc}") from None
    if version == 1 and kind == "memory":
        # Version 1 wrote metadata as a JSON value; the store keeps it as JSON text.
        out["metadata"] = json.dumps(out.get("metadata"), ensure_ascii=False, allow_nan=False)
    if into is not None and "namespace" in out:
        out["namespace"] = into
    return out


def _lines(
    lines: Iterable[bytes], progress: Callable[[int], None] | None
) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, raw in enumerate(lines, start=1):
        if progress is not None:
            progress(len(raw))
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError as exc:
            raise TransferError(f"line {number} is not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise TransferError(f"line {number} is not a JSON object")
        yield number, record


def _header(first: tuple[int, dict[str, Any]] | None) -> dict[str, Any]:
    if first is None:
        raise TransferError("the file is empty")
    number, header = first
    if header.get("type") in ("entity", "relation"):
        # The reference MCP memory server's graph file: memcore._facade.reference_import reads it.
        raise TransferError(
            f"line {number}: this is a knowledge-graph file of the reference memory server, "
            "not a memcore export",
            field="type",
        )
    if (
        header.get("type") != "header"
        or header.get("format") != FORMAT
        or header.get("version") not in READABLE_VERSIONS
    ):
        versions = "/".join(f"v{v}" for v in READABLE_VERSIONS)
        raise TransferError(f"line {number}: not a {FORMAT} {versions} file")
    return header


def _check_end(end: Mapping[str, Any] | None, report: ImportReport) -> None:
    if end is None:
        raise TransferError(
            f"the file ends without its end line (truncated?); the {report.restored} records "
            "before that point were imported"
        )
    expected = {k: v for k, v in dict(end.get("counts") or {}).items() if v}
    if report.read != expected:
        raise TransferError(f"the end line counts {expected} records, the file holds {report.read}")


class _Batch:
    """Records waiting for one restore call, with their vectors decided."""

    def __init__(
        self, memory: Memory, header: Mapping[str, Any], *, skip_existing: bool, embed: bool
    ) -> None:
        self._engine = native_engine(memory)
        self._skip = skip_existing
        self._vectors = _VectorPlan(memory, header, embed)
        self._records: list[dict[str, Any]] = []
        self._first_line = 0
        self._last_line = 0
        self.report = ImportReport(notes=self._vectors.notes)

    def add(self, line: int, record: dict[str, Any]) -> None:
        if not self._records:
            self._first_line = line
        self._last_line = line
        self._records.append(record)
        if len(self._records) >= BATCH:
            self.flush()

    def flush(self) -> None:
        records, self._records = self._records, []
        if self._skip and self._vectors.service is not None:
            # Leave out what the store holds before embedding: embedding records the restore
            # then skips would waste the model's time and make "embedded" count them.
            fresh = [r for r in records if not _already_stored(self._engine, r)]
            self.report.skipped += len(records) - len(fresh)
            records = fresh
        if not records:
            return
        self.report.embedded += self._vectors.apply(records)
        try:
            result = self._engine.restore(records, skip_existing=self._skip)
        except MemcoreError as exc:
            details = getattr(exc, "details", None)
            raise TransferError(
                f"lines {self._first_line}-{self._last_line}: {exc} (the {self.report.restored} "
                "records before them were imported)",
                field=details.get("field") if isinstance(details, dict) else None,
            ) from None
        self.report.restored += int(result["restored"])
        self.report.skipped += int(result["skipped"])


def _already_stored(engine: Engine, record: Mapping[str, Any]) -> bool:
    """Whether a record with this id is in the store (any namespace, as restore checks)."""
    record_id = record.get("id")
    if record["type"] in ("mention", PROJECT) or not isinstance(record_id, str) or not record_id:
        return False
    # Export pages run by id after a cursor. The cursor just below the id (ids are ASCII,
    # and U+10FFFF sorts after every ASCII character) makes the id the page's first row
    # when it is stored.
    below = record_id[:-1] + chr(ord(record_id[-1]) - 1) + "\U0010ffff"
    page = engine.export_page(record["type"], after=below, limit=1)
    return bool(page) and page[0].get("id") == record_id


class _VectorPlan:
    """Whether records keep the file's vectors, get new ones, or go without."""

    def __init__(self, memory: Memory, header: Mapping[str, Any], embed: bool) -> None:
        engine = native_engine(memory)
        given = header.get("embedding") if header.get("with_vectors") else None
        source = (given["model"], given["dim"]) if isinstance(given, Mapping) else None
        target = engine.embedding_identity()
        if source is not None and target is None and isinstance(source[0], str):
            # A store without a model yet takes the file's, so the file's vectors fit.
            engine.set_embedding_identity(source[0], int(source[1]))
            target = source
        self.keep = source is not None and target == source
        service = memory.embeddings
        usable = service is not None and service.status == "ready"
        self.service = service if embed and usable and not self.keep else None
        self.notes: list[str] = []
        if source is not None and not self.keep:
            what = f"{source[0]} ({source[1]}d)"
            if self.service is not None:
                self.notes.append(f"the file's vectors ({what}) were replaced by this store's")
            else:
                self.notes.append(f"the file's vectors ({what}) do not fit this store: dropped")
        if not self.keep and self.service is None and embed and not usable:
            self.notes.append("no embedding model was ready: records have no vectors")

    def apply(self, records: list[dict[str, Any]]) -> int:
        """Give the batch its vectors; how many records were embedded."""
        if self.keep:
            return 0
        for record in records:
            record.pop("vector", None)
        if self.service is None:
            return 0
        # Code chunks are embedded at the indexer's token limit, everything else at the model's.
        groups: dict[int | None, list[tuple[int, str]]] = {}
        for i, record in enumerate(records):
            text = _embedded_text(record)
            if text:
                groups.setdefault(_max_tokens(record), []).append((i, text))
        for limit, texts in groups.items():
            matrix = self.service.embed_passages([text for _, text in texts], max_tokens=limit)
            for (i, _), row in zip(texts, matrix, strict=True):
                records[i]["vector"] = row
        return sum(len(texts) for texts in groups.values())


def _max_tokens(record: Mapping[str, Any]) -> int | None:
    """The token limit a record's text is embedded at: the indexer's for code chunks."""
    if record["type"] != "code_chunk":
        return None
    from memcore.code.indexer import EMBED_MAX_TOKENS

    return EMBED_MAX_TOKENS


def _embedded_text(record: Mapping[str, Any]) -> str | None:
    """The text a record's vector embeds, as the facade and the indexer embed it."""
    kind = record["type"]
    if kind in ("memory", "observation"):
        text = record.get("content")
    elif kind == "turn":
        text = record.get("user_text")
    elif kind == "entity":
        from memcore._core import Engine

        text = Engine.entity_document_text(
            record["name"], record["entity_type"], record.get("description")
        )
    elif kind == "code_chunk":
        from memcore.code.indexer import passage_text

        text = passage_text(str(record.get("content", "")))
    else:
        return None
    return text if isinstance(text, str) and text.strip() else None


def _restore_projects(
    memory: Memory, projects: list[dict[str, Any]], skip_existing: bool, report: ImportReport
) -> None:
    engine = native_engine(memory)
    for row in projects:
        ns, project_id = row["namespace"], row["project_id"]
        try:
            engine.project_status(ns, project_id)
        except NotFoundError:
            pass
        else:
            if not skip_existing:
                raise TransferError(
                    f"project {project_id!r} of namespace {ns!r} already exists; import with "
                    "skip_existing to keep it.",
                    field="id",
                )
            report.skipped += 1
            continue
        status, error = row["status"], row.get("error")
        if status == "watching":
            status = "idle"  # no watcher runs for it here; index_project(watch=True) starts one
        elif status == "indexing":
            status, error = "error", "Exported while being indexed; index the project again."
        engine.put_project_status(
            ns,
            project_id,
            row["root"],
            status,
            total_files=row.get("total_files", 0),
            indexed_files=row.get("indexed_files", 0),
            started_at=row.get("started_at"),
            completed_at=row.get("completed_at"),
            error=error,
        )
        report.restored += 1


# -- times ------------------------------------------------------------------------------------


def _iso(micros: Any) -> Any:
    if not isinstance(micros, int):
        return micros
    return from_micros(micros).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _micros(value: Any) -> Any:
    if value is None or isinstance(value, int):  # integers are microseconds already
        return value
    return to_micros(value, "time")


def _convert_times(record: dict[str, Any], kind: str, convert: Callable[[Any], Any]) -> None:
    for name in TIME_FIELDS.get(kind, ()):
        if name in record:
            record[name] = convert(record[name])
    if kind == "turn":
        for procedure in record.get("procedures") or ():
            procedure["created_at"] = convert(procedure.get("created_at"))
            for version in procedure.get("documents") or ():
                version["created_at"] = convert(version.get("created_at"))
