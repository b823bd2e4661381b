"""The tools, apart from any front: what each one is, takes and does, and how a call to
one is checked and run. The MCP server (``memcore.mcp``) lists and serves them; the
``memcore`` command (``memcore.cli``) runs the tool a command is named after. Neither
front imports the other (tests/test_layers.py); both come here.

Layout: ``registry`` describes a tool (its spec, its call) and which tools a ``--tools``
profile selects; ``groups/<group>.py`` registers one capability's tools each (a new group
is one new file) and ``groups.load_registry`` gathers them; ``schema`` builds their JSON
Schemas; ``validation`` checks arguments against them and ``limits`` bounds their size;
``positions`` adds what every tool shares by its annotations (``min_seq``, ``seq``);
``host`` owns the store the calls run against; ``runner`` puts the checks and the run
together for one call. Importing this package is cheap: no store, no model, no MCP SDK.
"""
