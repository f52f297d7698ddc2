"""``sgam mcp``: SGAM's memory as MCP tools, over stdio or streamable HTTP.

The MCP server holds no data and no database connection: each tool is one call of the HTTP
API, made with the configured API key, so the tenant is the key's, as for any other client.
"""
