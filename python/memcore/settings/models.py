"""The embedding model list, as ``memcore models`` and the server's ``--list-models``
print it: one function for both fronts, which never import each other."""

from __future__ import annotations

import json


def show_models(*, as_json: bool) -> int:
    """Print the embedding model registry (``memcore models``, ``--list-models``)."""
    from memcore.embeddings import list_models

    models = list_models()
    if as_json:
        print(json.dumps(models, indent=2, ensure_ascii=False))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table("name", "dim", "size", "local", "description")
    for m in models:
        name = m["name"] + (" (default)" if m["default"] else "")
        local = "yes" if m["available_locally"] else "no"
        table.add_row(name, str(m["dim"]), f"{m['size_mb']} MB", local, m["description"])
    Console().print(table)
    return 0
