"""Extraction in a serving process: the worker thread that works ``extraction.jobs`` and counts
them in the server's metrics."""
