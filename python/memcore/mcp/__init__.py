"""memcore's MCP server: ``python -m memcore.mcp`` (stdio by default, streamable HTTP with
``--transport http``).

Layout: the tools themselves (their specs, schemas, argument checks and handlers) are
``memcore.tools``, shared with the ``memcore`` command; here ``dispatch`` serves a call
(the ``--tools`` profile, a worker thread, the error shape, metrics); ``listing`` is what
the server says about itself and its tools; ``server`` and ``envelope`` bind all that to the
MCP SDK; ``stdio`` serves stdin/stdout (``wire``), answering the handshake (``handshake``)
while the SDK still loads; ``http`` adds bearer auth, ``/healthz`` and ``/metrics``;
``maintenance`` runs periodic maintenance; ``main`` reads the settings and starts it.
Importing this package is cheap: the SDK is imported only when a server starts.
"""
