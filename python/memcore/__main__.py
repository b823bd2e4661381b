"""``python -m memcore``: the ``memcore`` command (see :mod:`memcore.cli.commands`)."""

from memcore.cli.commands import main

raise SystemExit(main())
