"""Reports of the store's health tools: `Memory.check`, `Memory.repair`, `Memory.backup`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcore.records.facts import Record


@dataclass(frozen=True, slots=True)
class IndexCheck(Record):
    """How one derived index compares with the database rows."""

    index: str
    """"catalog" (the in-memory filter labels), "text" (BM25) or "vectors" (HNSW)."""
    expected: int
    """Documents the database says the index should hold."""
    found: int
    """Documents it holds, committed and pending (a read-only instance's committed
    snapshot may still count some the writer deleted since)."""
    sampled: int
    """Document keys looked up (every one in stores of up to 2,000 documents)."""
    missing: int
    """Looked-up keys the index lacks: searches miss those documents."""

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> IndexCheck:
        """Build from one entry of the native check report."""
        return cls(
            index=str(raw["index"]),
            expected=int(raw["expected"]),
            found=int(raw["found"]),
            sampled=int(raw["sampled"]),
            missing=int(raw["missing"]),
        )


@dataclass(frozen=True, slots=True)
class CheckProblem(Record):
    """One thing `Memory.check` found wrong, and what to do about it."""

    area: str
    """"database", "catalog", "text" or "vectors"."""
    message: str
    fix: str


@dataclass(frozen=True, slots=True)
class StoreCheck(Record):
    """What `Memory.check` found: the database's integrity and each index's consistency."""

    ok: bool
    """True when nothing is wrong."""
    path: str
    """The database file checked."""
    integrity: list[str]
    """SQLite's `integrity_check` messages: ``["ok"]`` for a sound database."""
    last_seq: int
    """The highest write (op log seq) in the database."""
    indexes: list[IndexCheck]
    problems: list[CheckProblem]
    """Everything wrong, each with its fix; empty when `ok`."""

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> StoreCheck:
        """Build from the native check report."""
        return cls(
            ok=bool(raw["ok"]),
            path=str(raw["path"]),
            integrity=[str(m) for m in raw["integrity"]],
            last_seq=int(raw["last_seq"]),
            indexes=[IndexCheck.from_core(i) for i in raw["indexes"]],
            problems=[
                CheckProblem(area=str(p["area"]), message=str(p["message"]), fix=str(p["fix"]))
                for p in raw["problems"]
            ],
        )


@dataclass(frozen=True, slots=True)
class BackupReport(Record):
    """What `Memory.backup` wrote."""

    path: str
    """The backup file: a whole database that opens as a store."""
    bytes: int
    last_seq: int
    """Every write up to this op log seq is in the backup."""

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> BackupReport:
        """Build from the native backup report."""
        return cls(path=str(raw["path"]), bytes=int(raw["bytes"]), last_seq=int(raw["last_seq"]))


@dataclass(frozen=True, slots=True)
class RepairReport(Record):
    """What a repair did."""

    indexes_rebuilt: bool
    """The search indexes were rebuilt from the database."""
    database_set_aside: str | None
    """Where a damaged database was moved (only with ``accept_empty``)."""
    documents: int
    """Searchable documents after the rebuild."""
    last_seq: int
    """The highest write (op log seq) in the database."""

    @classmethod
    def from_core(cls, raw: dict[str, Any]) -> RepairReport:
        """Build from the native repair report."""
        aside = raw["database_set_aside"]
        return cls(
            indexes_rebuilt=bool(raw["indexes_rebuilt"]),
            database_set_aside=None if aside is None else str(Path(aside)),
            documents=int(raw["documents"]),
            last_seq=int(raw["last_seq"]),
        )
