"""``python -m memcore.cli``: the ``memcore`` command, as ``python -m memcore``."""

from memcore.cli import main

raise SystemExit(main())
