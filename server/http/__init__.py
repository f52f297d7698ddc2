"""The HTTP layer beside the routes: JSON bodies, the OpenAPI document, problem+json errors, the
request log, the receipt headers, metrics."""
