"""Pointing huggingface_hub at a fake hub and a temporary cache, as a real user would.

huggingface_hub copies ``HF_ENDPOINT``, ``HF_HOME`` and ``HF_HUB_OFFLINE`` into its
``constants`` module when first imported, so setting the variables in a test (after the
import) changes nothing by itself. :func:`use_hub` sets both the variables and the derived
constants, which is the state a process would be in had the variables been set at start.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_HUB_VARS = ("HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "HF_TOKEN")


def use_hub(
    monkeypatch: pytest.MonkeyPatch,
    *,
    hf_home: Path,
    endpoint: str = "http://127.0.0.1:9",
    offline: bool = False,
) -> Path:
    """Configure huggingface_hub for one test; ``monkeypatch`` undoes it afterwards.

    Args:
        monkeypatch: The test's monkeypatch fixture.
        hf_home: Temporary ``HF_HOME``; the hub cache is its ``hub`` folder.
        endpoint: ``HF_ENDPOINT``. The default is the discard port, so a stray request fails
            fast instead of reaching the real hub.
        offline: ``HF_HUB_OFFLINE``.

    Returns:
        The hub cache folder.
    """
    from huggingface_hub import constants

    for name in _HUB_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    if offline:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = hf_home / "hub"
    monkeypatch.setattr(constants, "HF_HOME", str(hf_home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(
        constants,
        "HUGGINGFACE_CO_URL_TEMPLATE",
        endpoint + "/{repo_id}/resolve/{revision}/{filename}",
    )
    # Derived from HF_HOME at import: the agent-harness registry that request headers
    # consult, and the token file; both must stay inside the temporary home.
    monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(hf_home / ".agent_harnesses.json"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(hf_home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(hf_home / "stored_tokens"))
    return cache
