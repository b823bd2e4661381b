"""``python -m memcore``: the ``memcore`` command (see :mod:`memcore.cli`)."""

from memcore.cli import main

raise SystemExit(main())
