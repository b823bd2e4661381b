"""SQLite against PostgreSQL nodes on this machine, in one run (docs/scale-out.md).

``python -m benches.pg`` (``--quick`` for a smoke run of seconds); results in
``benches/results/pg.md`` and ``pg.json``.
"""
