"""Subjects: their ids, names and the read of one subject's memory, exports, and merges of a
duplicate into a survivor."""
