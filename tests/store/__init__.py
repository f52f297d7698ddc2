"""The store and the read path through their Python API, on a real migrated database."""
