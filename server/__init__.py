"""The HTTP API, authentication and the ``sgam`` command line."""
