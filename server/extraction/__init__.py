"""Extraction in a serving process: the worker thread that works ``extraction.jobs`` and counts
them in the server's metrics; and a rule-based stand-in endpoint (``sgam extractor dev``) to try
extraction with no model."""
