"""Extraction: an episode sent to an OpenAI-compatible chat endpoint and its candidates written
back, by the worker that claims due jobs."""
