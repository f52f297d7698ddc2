"""Replay files: a fixed sequence of memory operations, one JSON result line per input line.

A ``context`` line may carry a ``gold`` field (its expected answer, for scoring, as
the leakage evaluation writes them); replay ignores it.

The clock: a line may set ``now``; a line without one keeps the previous line's clock; before
the first ``now`` the clock is the wall clock. A write takes ``now`` as its system time and may
not go back in system time. A read takes ``now`` as its valid instant and default known-at.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from pydantic import BaseModel

from retrieval.reader import Reader
from retrieval.search.embeddings import Embedder
from server.replay.ops import COMMON, OPS, JsonObject, Op
from store.db.clock import wall_clock
from store.db.database import scratch_database
from store.db.inputs import parse_instant
from store.errors import InvalidInput, StoreError
from store.service import MemoryStore, open_store


class ReplayClock:
    """The replay's clock: the wall clock until a line sets ``now``, then that instant."""

    def __init__(self) -> None:
        self.fixed: datetime | None = None

    def __call__(self) -> datetime:
        return self.fixed if self.fixed is not None else wall_clock()


class CountingIds:
    """Deterministic ids (1, 2, 3... as UUIDs) so a replay's output is reproducible."""

    def __init__(self) -> None:
        self.issued = 0

    def __call__(self) -> UUID:
        self.issued += 1
        return UUID(int=self.issued)


@dataclass
class Replay:
    """Runs replay lines against one store, keeping the clock and the system-time floor."""

    store: MemoryStore
    clock: ReplayClock
    embedder: Embedder | None = None
    last_write: datetime | None = None
    tenants: set[str] = field(default_factory=set)
    _reader: Reader | None = None

    def reader(self) -> Reader:
        """The read path for search and context lines (needs the embedding model)."""
        if self.embedder is None:
            raise InvalidInput("search and context lines need the embedding model", field="op")
        if self._reader is None:
            self._reader = Reader(self.store, self.embedder)
        return self._reader

    def run_line(self, number: int, text: str) -> JsonObject:
        """The result line for input line ``number``."""
        try:
            result = self._run(text)
        except StoreError as error:
            problem: JsonObject = {"code": error.code, "detail": error.detail}
            if error.field:
                problem["field"] = error.field
            return {"line": number, "ok": False, "error": problem}
        return {"line": number, "ok": True, "result": _jsonable(result)}

    def _run(self, text: str) -> Any:
        try:
            line = json.loads(text)
        except json.JSONDecodeError as error:
            raise InvalidInput(f"not a JSON line: {error}") from None
        if not isinstance(line, dict):
            raise InvalidInput("a replay line must be a JSON object")
        op = OPS.get(line.get("op"))  # type: ignore[arg-type]
        if op is None:
            raise InvalidInput(f"unknown op {line.get('op')!r}; one of {sorted(OPS)}", field="op")
        tenant = line.get("tenant")
        if not isinstance(tenant, str):
            raise InvalidInput("every line needs a tenant", field="tenant")
        _check_fields(line, op)
        if "now" in line:
            self.clock.fixed = parse_instant(line["now"], "now")
        if op.writes:
            now = self.clock()
            if self.last_write is not None and now < self.last_write:
                raise InvalidInput(
                    "writes may not go back in system time (this line's now is before an"
                    " earlier write's)",
                    field="now",
                )
            self.last_write = now
        if tenant not in self.tenants:
            self.store.admin.ensure_tenant(tenant)
            self.tenants.add(tenant)
        return op.run(self, tenant, line)


def _check_fields(line: JsonObject, op: Op) -> None:
    missing = sorted(op.required - line.keys())
    if missing:
        raise InvalidInput(f"{line['op']} needs {', '.join(missing)}", field=missing[0])
    if op.passthrough:
        return
    unknown = sorted(line.keys() - COMMON - op.required - op.optional)
    if unknown:
        raise InvalidInput(f"{line['op']} does not take {', '.join(unknown)}", field=unknown[0])


def _jsonable(result: Any) -> Any:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    if isinstance(result, dict):
        return {key: _jsonable(value) for key, value in result.items()}
    if isinstance(result, list):
        return [_jsonable(item) for item in result]
    return result


def replay_lines(
    store: MemoryStore,
    clock: ReplayClock,
    lines: Iterable[str],
    *,
    embedder: Embedder | None = None,
) -> Iterator[JsonObject]:
    """Run a replay's lines (blank lines skipped, numbered from 1) and yield result lines.

    With an ``embedder`` (the same one the store embeds episodes with) search and context
    lines work; without one they answer an error.
    """
    replay = Replay(store, clock, embedder=embedder)
    for number, text in enumerate(lines, start=1):
        if text.strip():
            yield replay.run_line(number, text)


def dumps(result: JsonObject) -> str:
    """One result line as written to the output."""
    return json.dumps(result, ensure_ascii=False, separators=(",", ":"))


def replay_file(
    path: Path, *, database_url: str | None, embedder: Embedder | None = None
) -> list[JsonObject]:
    """Replay ``path`` on a fresh temporary database (embedded unless ``database_url``).

    Episodes are embedded as they are recorded, by ``embedder`` or the default model.
    """
    model = embedder or Embedder().load()
    clock = ReplayClock()
    with (
        scratch_database(database_url) as conninfo,
        open_store(
            conninfo, clock=clock, new_id=CountingIds(), embedder=model, migrate=True
        ) as store,
        path.open(encoding="utf-8") as lines,
    ):
        return list(replay_lines(store, clock, lines, embedder=model))
