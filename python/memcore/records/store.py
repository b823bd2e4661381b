"""Reports of the store's health tools: `Memory.check`, `Memory.repair`, `Memory.backup`.

`StoreCheck` (with its `IndexCheck` and `CheckProblem` entries), `RepairReport` and
`BackupReport` are native classes defined in `rust/memcore-py/src/records/store.rs`: the
engine returns them as they are, frozen, with typed read-only attributes, `to_dict()`,
equality, `repr`, pickling and copying.
"""

from __future__ import annotations

from memcore._core import BackupReport, CheckProblem, IndexCheck, RepairReport, StoreCheck

__all__ = ["BackupReport", "CheckProblem", "IndexCheck", "RepairReport", "StoreCheck"]
