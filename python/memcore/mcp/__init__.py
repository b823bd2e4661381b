"""memcore's MCP server: ``python -m memcore.mcp`` (stdio by default, streamable HTTP with
``--transport http``).

Layout: ``registry`` describes tools and profiles; ``tools/<group>.py`` registers one
capability's tools each (a new group is one new file); ``dispatch`` runs a call (limits,
schema check, the facade in a worker thread, the error shape, metrics); ``host`` opens the
store in the background; ``listing`` is what the server says about itself and its tools;
``server`` and ``envelope`` bind all that to the MCP SDK; ``stdio`` serves stdin/stdout
(``wire``), answering the handshake (``handshake``) while the SDK still loads; ``http`` adds
bearer auth, ``/healthz`` and ``/metrics``; ``main`` reads the settings and starts it.
Importing this package is cheap: the SDK is imported only when a server starts.
"""
