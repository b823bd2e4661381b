"""Errors: every invalid argument raises the right `MemcoreError` subclass with
its code, names the field, says what to fix, and writes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memcore
import memcore.errors
from backends import Backend, both_backends
from conftest import unit
from memcore import (
    DimensionMismatchError,
    EmbeddingError,
    InvalidParameterError,
    MemcoreError,
    Memory,
    MemoryNotFoundError,
    NotFoundError,
    PayloadTooLargeError,
    ResourceBusyError,
    StorageError,
    UnauthorizedError,
    ValidationFailedError,
    _core,
)
from memcore.errors import error_payload

CODES: dict[type[MemcoreError], str] = {
    MemoryNotFoundError: "MEMORY_NOT_FOUND",
    NotFoundError: "NOT_FOUND",
    InvalidParameterError: "INVALID_PARAMETER",
    ValidationFailedError: "VALIDATION_FAILED",
    StorageError: "STORAGE_ERROR",
    EmbeddingError: "EMBEDDING_ERROR",
    DimensionMismatchError: "DIMENSION_MISMATCH",
    ResourceBusyError: "RESOURCE_BUSY",
    UnauthorizedError: "UNAUTHORIZED",
    PayloadTooLargeError: "PAYLOAD_TOO_LARGE",
}
MISSING = "mem_01M00000000000000000000000"


def state(mem: Memory) -> tuple[int, list[dict[str, Any]]]:
    """The count and every record of the default namespace (listing does not touch)."""
    return mem.status()["counts"]["memories"], [r.to_dict() for r in mem.list_memories(limit=1000)]


@pytest.fixture(scope="module")
def shared(module_backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    """One store for the long argument tables (opening a store per case is the
    slow part). Each case compares the state before and after itself, so it
    does not need an empty store, only one where failures leave no trace."""
    with module_backend.open(tmp_path_factory.mktemp("errors") / "store", model=None) as m:
        m.store_memory("fixes the vector dimension at 8", vector=unit(0, 8))
        yield m


# -- the hierarchy ----------------------------------------------------------------------


@pytest.mark.parametrize("cls", CODES, ids=[c.__name__ for c in CODES])
def test_every_error_is_a_memcore_error_with_its_code(cls: type[MemcoreError]) -> None:
    assert issubclass(cls, MemcoreError) and issubclass(MemcoreError, Exception)
    assert cls.code == CODES[cls]
    assert getattr(memcore, cls.__name__) is cls is getattr(memcore.errors, cls.__name__)
    assert cls.__name__ in memcore.__all__ and cls.__name__ in memcore.errors.__all__


@pytest.mark.parametrize("code", _core.ERROR_CODES)
def test_every_core_code_has_its_class_in_memcore_errors(code: str) -> None:
    # The core's one list of codes (rust/memcore/src/error.rs): a code added there
    # needs its exception class exported here, and the docs' table above.
    classes = [
        cls
        for name in memcore.errors.__all__
        if isinstance(cls := getattr(memcore.errors, name), type)
        and issubclass(cls, MemcoreError)
        and cls.code == code
    ]
    assert len(classes) == 1, f"{code}: {classes}"
    assert CODES[classes[0]] == code


def test_the_core_lists_every_documented_code() -> None:
    assert set(_core.ERROR_CODES) == set(CODES.values())


@both_backends
def test_the_facade_checks_the_core_text_limit(mem: Memory) -> None:
    # The facade refuses early (with the size in details) at exactly the core's limit:
    # a text of MAX_TEXT_BYTES is stored, one byte more is not.
    limit = _core.MAX_TEXT_BYTES
    mem.store_memory("é" * (limit // 2), vector=unit(0, 8))
    with pytest.raises(PayloadTooLargeError) as raised:
        mem.store_memory("é" * (limit // 2) + "x", vector=unit(0, 8))
    assert raised.value.details == {"field": "content", "limit": limit, "size": limit + 1}


def test_memory_not_found_is_a_not_found() -> None:
    assert issubclass(MemoryNotFoundError, NotFoundError)
    assert not issubclass(InvalidParameterError, NotFoundError)
    codes = [c.code for c in CODES]
    assert len(set(codes)) == len(codes)


@both_backends
def test_error_payload_of_an_engine_error(mem: Memory) -> None:
    with pytest.raises(MemoryNotFoundError) as info:
        mem.get_memory(MISSING)
    payload = error_payload(info.value)
    assert payload == {
        "code": "MEMORY_NOT_FOUND",
        "message": f"Memory not found: {MISSING}",
        "details": {"id": MISSING},
    }
    json.dumps(payload)


@both_backends
def test_error_payload_of_a_facade_error(mem: Memory) -> None:
    with pytest.raises(InvalidParameterError) as info:
        mem.list_memories(limit=0)
    payload = error_payload(info.value)
    assert payload["code"] == "INVALID_PARAMETER"
    assert payload["details"] == {"field": "limit"}
    assert "limit" in payload["message"]


def test_error_payload_without_details() -> None:
    assert error_payload(StorageError("disk on fire")) == {
        "code": "STORAGE_ERROR",
        "message": "disk on fire",
        "details": {},
    }
    with pytest.raises(MemcoreError):
        raise ResourceBusyError("busy")


# -- store_memory arguments ------------------------------------------------------------

# (kwargs for store_memory, error class, details["field"] or None, fragment of the message)
BAD_STORES: dict[str, tuple[dict[str, Any], type[MemcoreError], str | None, str]] = {
    "empty-content": ({"content": ""}, InvalidParameterError, "content", "content is empty"),
    "whitespace-content": ({"content": " \n\t "}, InvalidParameterError, "content", "Pass the"),
    "non-string-content": ({"content": 42}, InvalidParameterError, "content", "string"),
    "confidence-above": ({"confidence": 1.01}, InvalidParameterError, "confidence", "0 and 1"),
    "confidence-below": ({"confidence": -0.1}, InvalidParameterError, "confidence", "0 and 1"),
    # NaN and infinity are refused before any rule of their field: memcore.arguments.
    "confidence-nan": (
        {"confidence": float("nan")},
        InvalidParameterError,
        "confidence",
        "finite number",
    ),
    "confidence-inf": (
        {"confidence": float("inf")},
        InvalidParameterError,
        "confidence",
        "finite number",
    ),
    "confidence-text": ({"confidence": "high"}, InvalidParameterError, "confidence", "number"),
    "importance-above": ({"importance": 2}, InvalidParameterError, "importance", "0 and 1"),
    "importance-below": ({"importance": -1e-9}, InvalidParameterError, "importance", "0 and 1"),
    "importance-nan": (
        {"importance": float("nan")},
        InvalidParameterError,
        "importance",
        "finite number",
    ),
    "memory-type": ({"memory_type": "fact"}, InvalidParameterError, "memory_type", "episodic"),
    "memory-type-case": (
        {"memory_type": "Semantic"},
        InvalidParameterError,
        "memory_type",
        "Use one of",
    ),
    "source": ({"source": "user"}, InvalidParameterError, "source", "explicit, extracted"),
    "metadata-object": ({"metadata": {"a": object()}}, InvalidParameterError, "metadata", "JSON"),
    "metadata-set": ({"metadata": {1, 2}}, InvalidParameterError, "metadata", "JSON"),
    "metadata-nan": (
        {"metadata": {"x": float("nan")}},
        InvalidParameterError,
        "metadata.x",
        "finite number",
    ),
    "metadata-bytes": ({"metadata": b"raw"}, InvalidParameterError, "metadata", "JSON"),
    "content-too-large": (
        {"content": "x" * 100_001},
        PayloadTooLargeError,
        None,
        "limit is 100000",
    ),
    "metadata-too-large": (
        {"metadata": {"blob": "x" * 70_000}},
        PayloadTooLargeError,
        None,
        "limit is 64000",
    ),
    "event-time-text": ({"event_time": "last tuesday"}, InvalidParameterError, "event_time", "ISO"),
    "event-time-date-overflow": (
        {"event_time": "2024-02-30T00:00:00Z"},
        InvalidParameterError,
        "event_time",
        "ISO 8601",
    ),
    "event-time-nan": (
        {"event_time": float("nan")},
        InvalidParameterError,
        "event_time",
        "finite number",
    ),
    "event-time-far-future": (
        {"event_time": 1e12},
        InvalidParameterError,
        "event_time",
        "between years 1 and 9999",
    ),
    "event-time-bool": ({"event_time": True}, InvalidParameterError, "event_time", "ISO"),
    "valid-from-text": ({"valid_from": "soon"}, InvalidParameterError, "valid_from", "ISO"),
    "expires-at-text": ({"expires_at": "never"}, InvalidParameterError, "expires_at", "ISO"),
    "expires-before-valid-from": (
        {"valid_from": "2030-01-01T00:00:00Z", "expires_at": "2029-01-01T00:00:00Z"},
        InvalidParameterError,
        "expires_at",
        "later than valid_from",
    ),
    "ttl-zero": ({"ttl": 0}, InvalidParameterError, "ttl", "positive"),
    "ttl-negative": ({"ttl": -5}, InvalidParameterError, "ttl", "positive"),
    "ttl-nan": ({"ttl": float("nan")}, InvalidParameterError, "ttl", "finite number"),
    "ttl-inf": ({"ttl": float("inf")}, InvalidParameterError, "ttl", "finite number"),
    "ttl-huge": ({"ttl": 1e15}, InvalidParameterError, "ttl", "too long"),
    "ttl-and-expires-at": (
        {"ttl": 5, "expires_at": "2099-01-01T00:00:00Z"},
        InvalidParameterError,
        "ttl",
        "not both",
    ),
    "thread-id-control": ({"thread_id": "a\nb"}, InvalidParameterError, "thread_id", "control"),
    "user-id-too-long": ({"user_id": "u" * 257}, InvalidParameterError, "user_id", "longer"),
    "empty-namespace": ({"namespace": ""}, InvalidParameterError, "namespace", "namespace is"),
    "blank-namespace": ({"namespace": "   "}, InvalidParameterError, "namespace", "empty"),
    "long-namespace": ({"namespace": "n" * 257}, InvalidParameterError, "namespace", "longer"),
}


@pytest.mark.parametrize("case", BAD_STORES.values(), ids=BAD_STORES.keys())
def test_bad_store_arguments_raise_and_write_nothing(
    shared: Memory, case: tuple[dict[str, Any], type[MemcoreError], str | None, str]
) -> None:
    kwargs, cls, field, fragment = case
    shared.store_memory("an existing fact", vector=unit(0, 8))
    before = state(shared)
    args = {"content": "a valid fact", **kwargs}
    with pytest.raises(cls) as info:
        shared.store_memory(args.pop("content"), **args)
    err = info.value
    assert type(err) is cls
    assert type(err).code == CODES[cls]
    assert fragment in str(err)
    if field is not None:
        assert err.details["field"] == field
    assert state(shared) == before


@both_backends
def test_error_messages_name_the_bad_value(mem: Memory) -> None:
    with pytest.raises(InvalidParameterError, match="'fact'"):
        mem.store_memory("x", memory_type="fact")
    with pytest.raises(InvalidParameterError, match=r"got 1\.5"):
        mem.store_memory("x", confidence=1.5)
    with pytest.raises(InvalidParameterError, match="'yesterday'"):
        mem.get_valid_at("yesterday")


# -- unknown ids -----------------------------------------------------------------------

ById = Callable[[Memory, str], object]

BY_ID: dict[str, ById] = {
    "get": lambda m, i: m.get_memory(i),
    "update": lambda m, i: m.update_memory(i, content="new"),
    "delete": lambda m, i: m.delete_memory(i),
    "invalidate": lambda m, i: m.invalidate(i, "gone"),
    "supersede-old": lambda m, i: m.supersede_memory(i, m.list_memories()[0].id),
    "supersede-new": lambda m, i: m.supersede_memory(m.list_memories()[0].id, i),
}


@pytest.mark.parametrize("op", BY_ID.values(), ids=BY_ID.keys())
@pytest.mark.parametrize("missing", [MISSING, "", "not-an-id", "mem_'; DROP TABLE memories;--"])
def test_unknown_id_raises_memory_not_found(shared: Memory, op: ById, missing: str) -> None:
    shared.store_memory("something the ops can point at")
    before = state(shared)
    with pytest.raises(MemoryNotFoundError) as info:
        op(shared, missing)
    err = info.value
    assert isinstance(err, NotFoundError)
    assert type(err).code == "MEMORY_NOT_FOUND"
    assert err.details == {"id": missing}
    assert missing in str(err)
    assert state(shared) == before


# -- vectors ---------------------------------------------------------------------------


@both_backends
def test_the_first_vector_fixes_the_dimension(mem: Memory) -> None:
    mem.store_memory("eight dims", vector=unit(1, 8))
    before = state(mem)
    with pytest.raises(InvalidParameterError, match=r"4 dimensions.*8-dimensional") as info:
        mem.store_memory("four dims", vector=unit(2, 4))
    assert info.value.details["field"] == "vector"
    assert state(mem) == before
    mem.store_memory("eight again", vector=unit(3, 8))


@both_backends
def test_wrong_dimension_on_update_changes_nothing(mem: Memory) -> None:
    m = mem.store_memory("eight dims", vector=unit(1, 8)).id
    before = state(mem)
    with pytest.raises(InvalidParameterError, match="dimensions"):
        mem.update_memory(m, content="new content", vector=unit(2, 16))
    assert state(mem) == before


BAD_VECTORS: dict[str, tuple[Any, str]] = {
    "zero": (np.zeros(8, dtype=np.float32), "all zeros"),
    "nan": (np.array([np.nan] + [0.5] * 7, dtype=np.float32), "NaN"),
    "inf": (np.array([np.inf] + [0.5] * 7, dtype=np.float32), "infinite"),
    "two-dimensional": (np.ones((2, 4), dtype=np.float32), "one-dimensional"),
    "not-numeric": (["a", "b"], "numeric"),
    "wrong-dimension": (unit(5, 3), "dimensions"),
}


@pytest.mark.parametrize("case", BAD_VECTORS.values(), ids=BAD_VECTORS.keys())
def test_bad_vectors_raise_and_write_nothing(shared: Memory, case: tuple[Any, str]) -> None:
    vector, fragment = case
    shared.store_memory("fixes dimension 8", vector=unit(0, 8))
    before = state(shared)
    with pytest.raises(InvalidParameterError, match=fragment) as info:
        shared.store_memory("bad vector", vector=vector)
    assert info.value.details["field"] == "vector"
    assert state(shared) == before


@both_backends
@pytest.mark.parametrize(
    "vector",
    [
        np.full(4, np.nan, dtype=np.float32),
        np.zeros(4, dtype=np.float32),
        np.zeros(0, dtype=np.float32),
    ],
    ids=["nan", "zero", "empty"],
)
def test_a_rejected_first_vector_does_not_fix_the_dimension(
    mem: Memory, vector: np.ndarray[Any, Any]
) -> None:
    with pytest.raises(InvalidParameterError):
        mem.store_memory("bad first vector", vector=vector)
    assert state(mem) == (0, [])
    mem.store_memory("eight dims", vector=unit(1, 8))  # 8, not 4, is now the dimension
    with pytest.raises(InvalidParameterError, match="8-dimensional"):
        mem.store_memory("four dims", vector=unit(1, 4))


@both_backends
def test_a_vector_without_new_content_is_refused(mem: Memory) -> None:
    m = mem.store_memory("fact", vector=unit(1, 8)).id
    before = state(mem)
    with pytest.raises(InvalidParameterError, match="without new content") as info:
        mem.update_memory(m, vector=unit(2, 8))
    assert info.value.details["field"] == "vector"
    assert state(mem) == before


# -- update_memory arguments ------------------------------------------------------------

BAD_UPDATES: dict[str, tuple[dict[str, Any], type[MemcoreError], str | None, str]] = {
    "nothing": ({}, InvalidParameterError, "patch", "Nothing to update"),
    "empty-content": ({"content": ""}, InvalidParameterError, "content", "content is empty"),
    "blank-content": ({"content": "  "}, InvalidParameterError, "content", "content is empty"),
    "non-string-content": ({"content": 7}, InvalidParameterError, "content", "string"),
    "confidence": ({"confidence": 1.5}, InvalidParameterError, "confidence", "0 and 1"),
    "importance-nan": (
        {"importance": float("nan")},
        InvalidParameterError,
        "importance",
        "finite number",
    ),
    "importance-text": ({"importance": "very"}, InvalidParameterError, "importance", "number"),
    "memory-type": ({"memory_type": "fact"}, InvalidParameterError, "memory_type", "Use one of"),
    "source": ({"source": "robot"}, InvalidParameterError, "source", "Use one of"),
    "metadata": ({"metadata": {"f": print}}, InvalidParameterError, "metadata", "JSON"),
    "event-time": ({"event_time": "someday"}, InvalidParameterError, "event_time", "ISO"),
    "expires-at": (
        {"expires_at": float("inf")},
        InvalidParameterError,
        "expires_at",
        "finite number",
    ),
    "thread-id": ({"thread_id": "x\x00y"}, InvalidParameterError, "thread_id", "control"),
    "too-large": ({"content": "y" * 100_001}, PayloadTooLargeError, None, "limit"),
    "bad-and-good": (
        {"importance": 0.9, "confidence": -1.0},
        InvalidParameterError,
        "confidence",
        "0 and 1",
    ),
}


@pytest.mark.parametrize("case", BAD_UPDATES.values(), ids=BAD_UPDATES.keys())
def test_bad_update_arguments_raise_and_write_nothing(
    shared: Memory, case: tuple[dict[str, Any], type[MemcoreError], str | None, str]
) -> None:
    kwargs, cls, field, fragment = case
    m = shared.store_memory("original", thread_id="t", metadata={"k": 1}).id
    before = state(shared)
    with pytest.raises(cls) as info:
        shared.update_memory(m, **kwargs)
    assert type(info.value) is cls and fragment in str(info.value)
    if field is not None:
        assert info.value.details["field"] == field
    assert state(shared) == before


# -- listing arguments -----------------------------------------------------------------

BAD_LISTINGS: dict[str, tuple[Callable[[Memory], object], str]] = {
    "limit-zero": (lambda m: m.list_memories(limit=0), "limit"),
    "limit-negative": (lambda m: m.list_memories(limit=-1), "limit"),
    "limit-too-big": (lambda m: m.list_memories(limit=1001), "limit"),
    "limit-float": (lambda m: m.list_memories(limit=2.5), "limit"),  # type: ignore[arg-type]
    "limit-bool": (lambda m: m.list_memories(limit=True), "limit"),
    "offset-negative": (lambda m: m.list_memories(offset=-1), "offset"),
    "offset-huge": (lambda m: m.list_memories(offset=2**64), "offset"),
    "recent-limit-zero": (lambda m: m.list_recent_memories(limit=0), "limit"),
    "valid-limit-zero": (lambda m: m.get_valid(limit=0), "limit"),
    "valid-at-offset": (lambda m: m.get_valid_at("2020-01-01", offset=-3), "offset"),
    "as-of-text": (lambda m: m.list_memories(as_of="the day before"), "as_of"),
    "as-of-nan": (lambda m: m.list_memories(as_of=float("nan")), "as_of"),
    "as-of-huge": (lambda m: m.list_memories(as_of=10**20), "as_of"),
    "valid-at-text": (lambda m: m.get_valid_at("noon"), "timestamp"),
    "valid-at-none": (lambda m: m.get_valid_at(None), "timestamp"),  # type: ignore[arg-type]
    "valid-at-inf": (lambda m: m.get_valid_at(float("-inf")), "timestamp"),
    "empty-namespace": (lambda m: m.list_memories(namespace=""), "namespace"),
    "blank-namespace-valid": (lambda m: m.get_valid(namespace=" "), "namespace"),
}


@pytest.mark.parametrize("case", BAD_LISTINGS.values(), ids=BAD_LISTINGS.keys())
def test_bad_listing_arguments_raise_invalid_parameter(
    shared: Memory, case: tuple[Callable[[Memory], object], str]
) -> None:
    call, field = case
    shared.store_memory("something to list")
    with pytest.raises(InvalidParameterError) as info:
        call(shared)
    assert info.value.details["field"] == field
    assert field in str(info.value)


EMPTY_NAMESPACE: dict[str, ById] = {
    "get": lambda m, i: m.get_memory(i, namespace=""),
    "update": lambda m, i: m.update_memory(i, importance=0.1, namespace=""),
    "delete": lambda m, i: m.delete_memory(i, namespace=""),
    "invalidate": lambda m, i: m.invalidate(i, namespace=""),
    "supersede": lambda m, i: m.supersede_memory(i, MISSING, namespace=""),
}


@pytest.mark.parametrize("op", EMPTY_NAMESPACE.values(), ids=EMPTY_NAMESPACE.keys())
def test_empty_namespace_on_by_id_operations_is_invalid(shared: Memory, op: ById) -> None:
    real = shared.store_memory("real").id
    with pytest.raises(InvalidParameterError) as info:
        op(shared, real)
    assert info.value.details["field"] == "namespace"


def test_empty_instance_namespace_is_refused_before_opening(tmp_path: Path) -> None:
    for namespace in ("", "   "):
        with pytest.raises(InvalidParameterError, match="non-empty") as info:
            Memory(tmp_path / "store", model=None, namespace=namespace)
        assert info.value.details["field"] == "namespace"
    assert not (tmp_path / "store").exists()


@both_backends
def test_an_expiry_before_the_default_valid_from_is_refused(mem: Memory) -> None:
    kept = mem.store_memory("kept").id
    before = state(mem)
    with pytest.raises(InvalidParameterError, match="later than valid_from"):
        mem.store_memory("born expired", expires_at="2000-01-01T00:00:00Z")
    with pytest.raises(InvalidParameterError, match="later than valid_from"):
        mem.update_memory(kept, expires_at="2000-01-01T00:00:00Z")
    assert state(mem) == before
