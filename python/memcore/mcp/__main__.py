"""``python -m memcore.mcp``: run the MCP server."""

from memcore.mcp.main import main

raise SystemExit(main())
