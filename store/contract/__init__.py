"""The wire contract: every model the HTTP API, the Python client and MCP exchange, the error
codes with their HTTP statuses, and the pure helpers the models validate with.

It imports pydantic and the standard library only, so ``server.client`` loads it without the
store, the read path or the server.
"""
