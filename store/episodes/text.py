"""Text folding shared by the write path (evidence checks) and the read path (snippets)."""

from __future__ import annotations

import re

_WHITESPACE = re.compile(r"\s+")


def one_line(text: str) -> str:
    """The text with every run of whitespace (line breaks included) folded to one space."""
    return _WHITESPACE.sub(" ", text).strip()
