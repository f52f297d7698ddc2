"""The HTTP API through the app and the typed client: routes, problems, isolation, OpenAPI, MCP
over HTTP."""
