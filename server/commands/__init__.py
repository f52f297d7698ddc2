"""The operator commands of ``sgam`` beside ``serve``: tenants and keys, memory health, the bulk
import, the retention purge, the extraction worker and a stand-in extractor (``server.cli``
assembles them)."""
