"""The MCP server (``vaultsync mcp``): the vault's search, notes and write path as tools for coding agents."""
