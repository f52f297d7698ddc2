"""Replay files with gold: the questions a leakage run scores, read and checked up front.

A question is a ``context`` line carrying ``gold`` (the object ``evals.histories.generate`` writes:
kind, subject, attribute, answer, answers, values, other_tenant_values); every other line is a
write (sent to each memory in order) or a read (skipped: it changes nothing).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.arms.systems import DROPPED, READ_OPS, WRITE_OPS, Line, is_question
from evals.leakage.scoring import as_gold


@dataclass(frozen=True)
class GeneratedLines:
    """A generated trace: its replay lines (JSON text, in order) and counts of what they hold."""

    seed: int
    encoded: tuple[str, ...]
    summary: Mapping[str, int]

    def lines(self) -> list[dict[str, Any]]:
        """Every replay line in order: definitions (and names), writes, then questions."""
        return [json.loads(line) for line in self.encoded]

    def questions(self) -> list[dict[str, Any]]:
        """The question lines (``op`` context, with ``gold``)."""
        return [line for line in self.lines() if line["op"] == "context"]

    def text(self) -> str:
        """The lines as JSONL text: one line each, a newline after the last."""
        return "".join(f"{line}\n" for line in self.encoded)

    def write(self, path: Path) -> None:
        """Write the JSONL file (same seed and size, same bytes)."""
        path.write_text(self.text(), encoding="utf-8")


def encode_lines(lines: Iterable[dict[str, Any]]) -> tuple[str, ...]:
    """Replay lines as compact JSON text, byte for byte the same for the same lines."""
    return tuple(json.dumps(line, ensure_ascii=False, separators=(",", ":")) for line in lines)


@dataclass(frozen=True)
class Trace:
    """One replay file's lines (or a generated history's), checked."""

    name: str
    lines: list[Line]

    def __post_init__(self) -> None:
        for number, line in enumerate(self.lines, start=1):
            problem = _line_problem(line)
            if problem:
                raise ValueError(f"{self.name} line {number}: {problem}")

    @property
    def questions(self) -> int:
        """How many lines are scored questions."""
        return sum(is_question(line) for line in self.lines)

    @property
    def writes(self) -> int:
        """How many lines change a memory."""
        return sum(line["op"] in WRITE_OPS for line in self.lines)


def _line_problem(line: Any) -> str | None:
    if not isinstance(line, dict):
        return "a replay line must be a JSON object"
    if line.get("op") not in WRITE_OPS | READ_OPS | {DROPPED}:
        return f"unknown op {line.get('op')!r}"
    if not isinstance(line.get("tenant"), str):
        return "every line needs a tenant"
    if is_question(line):
        if not isinstance(line.get("question"), str):
            return "a question line needs its question"
        try:
            as_gold(line["gold"])
        except (KeyError, TypeError, ValueError) as error:
            return f"gold: {error!r}"
    return None


def read_trace(path: Path) -> Trace:
    """A replay file (blank lines skipped), checked line by line."""
    lines = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text.strip():
            try:
                lines.append(json.loads(text))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path.name} line {number}: not JSON: {error}") from None
    return Trace(path.name, lines)


def read_folder(folder: Path) -> tuple[list[Trace], list[str]]:
    """The folder's ``*.jsonl`` files that ask questions with gold, and the names of the rest.

    A file without a single question line carrying ``gold`` (a result file, a trace of reads)
    is left out unread beyond that check.
    """
    traces, skipped = [], []
    for path in sorted(folder.glob("*.jsonl")):
        if _asks(path):
            traces.append(read_trace(path))
        else:
            skipped.append(path.name)
    return traces, skipped


def _asks(path: Path) -> bool:
    """Whether some line of the file is a question with gold (unparsable lines aside)."""
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            if is_question(json.loads(text)):
                return True
        except (json.JSONDecodeError, AttributeError):
            continue
    return False
