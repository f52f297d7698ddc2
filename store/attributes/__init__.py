"""Attributes: the schema registry, renames and their old names, and migrations of a declaration
with the conversions of stored values."""
