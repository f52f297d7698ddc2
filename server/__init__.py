"""The HTTP API and everything around it: authentication, the routes, the timeline pages, the
MCP server, the typed client, replay files, the extraction worker and the ``sgam`` command
line."""
