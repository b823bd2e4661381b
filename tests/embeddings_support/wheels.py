"""Installing a fake distribution on ``sys.path``, to test the package-resource source."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def install_fake_distribution(
    monkeypatch: pytest.MonkeyPatch,
    site: Path,
    *,
    name: str,
    files: dict[str, Path],
    version: str = "1.0.0",
) -> None:
    """Lay out ``files`` (path in distribution -> source file) as an installed distribution.

    Only the ``.dist-info/METADATA`` that ``importlib.metadata`` needs is written; the folder
    is prepended to ``sys.path`` for the duration of the test.
    """
    dist_info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    for relative, source in files.items():
        target = site / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    monkeypatch.syspath_prepend(str(site))
