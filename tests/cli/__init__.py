"""The ``sgam`` command line and real processes: serve, the operator commands, MCP over stdio,
workers."""
