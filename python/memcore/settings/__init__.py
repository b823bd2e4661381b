"""What the process is told to do, read alike by both fronts (the ``memcore`` command and
the MCP server), which never import each other (tests/test_layers.py):

- ``options``: every setting's flag, ``MEMCORE_*`` variable and default, resolved into
  :class:`~memcore.settings.options.Settings` (docs/configuration.md);
- ``extractor``: the ``--fact-extractor module:function`` loader;
- ``models``: the embedding model list, as ``memcore models`` and ``--list-models`` print it;
- ``tokens``: the bearer-token file the HTTP server reads and ``memcore auth`` writes.

Importing it is cheap (no store, no model, no MCP SDK), so ``memcore --help`` stays quick.
"""
