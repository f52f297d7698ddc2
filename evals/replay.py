"""Replay files: a fixed sequence of memory operations, one JSON result line per input line.

A ``context`` line may carry a ``gold`` field (its expected answer, for scoring, as
``evals.histories`` writes them); replay ignores it.

The clock: a line may set ``now``; a line without one keeps the previous line's clock; before
the first ``now`` the clock is the wall clock. A write takes ``now`` as its system time and may
not go back in system time. A read takes ``now`` as its valid instant and default known-at.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from pydantic import BaseModel

from retrieval.embeddings import Embedder
from retrieval.reader import Reader
from store.clock import wall_clock
from store.contract.reads import ContextRequest, SearchRequest
from store.database import scratch_database
from store.errors import Conflict, InvalidInput, NotFound, StoreError
from store.inputs import parse_input, parse_instant
from store.service import MemoryStore, open_store

JsonObject = dict[str, Any]
_COMMON = frozenset({"op", "tenant", "now"})


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


@dataclass(frozen=True, slots=True)
class Op:
    """One replay operation: its fields and whether it writes."""

    run: Callable[[Replay, str, JsonObject], Any]
    required: frozenset[str]
    optional: frozenset[str] = frozenset()
    writes: bool = False
    passthrough: bool = False  # remaining fields form the body (define, episode)


def _body(line: JsonObject, *, drop: Iterable[str]) -> JsonObject:
    dropped = _COMMON | set(drop)
    return {key: value for key, value in line.items() if key not in dropped}


def _define(replay: Replay, tenant: str, line: JsonObject) -> Any:
    return replay.store.admin.declare_attribute(
        tenant, line["attribute"], _body(line, drop={"attribute"})
    )


def _subject(replay: Replay, tenant: str, line: JsonObject) -> Any:
    return replay.store.subjects.declare_names(
        tenant, line["subject"], _body(line, drop={"subject"})
    )


def _episode(replay: Replay, tenant: str, line: JsonObject) -> Any:
    return replay.store.episodes.record(tenant, _body(line, drop=()))


def _update(replay: Replay, tenant: str, line: JsonObject) -> Any:
    [result] = replay.store.facts.apply_updates(tenant, line["episode"], [line["candidate"]])
    return result


def _at(replay: Replay, tenant: str, line: JsonObject) -> Any:
    return replay.store.facts.at(
        tenant,
        line["subject"],
        line["attribute"],
        valid_at=line.get("valid_at"),
        known_at=line.get("known_at"),
    )


def _history(replay: Replay, tenant: str, line: JsonObject) -> Any:
    versions = replay.store.facts.history(tenant, line["subject"], line["attribute"])
    return {"subject": line["subject"], "attribute": line["attribute"], "versions": versions}


def _profile(replay: Replay, tenant: str, line: JsonObject) -> Any:
    return replay.store.subjects.profile(
        tenant, line["subject"], valid_at=line.get("valid_at"), known_at=line.get("known_at")
    )


def _expire(replay: Replay, tenant: str, line: JsonObject) -> Any:
    return replay.store.facts.expire(
        tenant,
        line["subject"],
        line["attribute"],
        at=line["at"],
        source_episode_id=line["source_episode_id"],
    )


def _erase(replay: Replay, tenant: str, line: JsonObject) -> Any:
    if ("subject" in line) == ("episode" in line):
        raise InvalidInput("erase takes exactly one of subject or episode", field="subject")
    if "episode" in line:
        return replay.store.erasure.erase_episode(tenant, line["episode"])
    return replay.store.erasure.erase_subject(tenant, line["subject"])


def _retract(replay: Replay, tenant: str, line: JsonObject) -> Any:
    return replay.store.facts.retract(
        tenant,
        line["subject"],
        line["attribute"],
        valid_from=line.get("valid_from"),
        fact_id=line.get("fact_id"),
    )


def _resolve(replay: Replay, tenant: str, line: JsonObject) -> Any:
    page = replay.store.conflicts.list(
        tenant,
        status="open",
        subject=line["subject"],
        attribute=line["attribute"],
        valid_from=line["valid_from"],
    )
    if not page.conflicts:
        raise NotFound("no open conflict of that key starts at that instant", field="valid_from")
    if len(page.conflicts) > 1:
        raise Conflict(
            f"{len(page.conflicts)} open conflicts start at that instant; resolve them by id",
            field="valid_from",
        )
    return replay.store.conflicts.resolve(
        tenant, page.conflicts[0].conflict_id, choose=line["choose"]
    )


def _search(replay: Replay, tenant: str, line: JsonObject) -> Any:
    request = parse_input(SearchRequest, _body(line, drop=()))
    return replay.reader().search(tenant, request)


def _context(replay: Replay, tenant: str, line: JsonObject) -> Any:
    request = parse_input(ContextRequest, _body(line, drop={"gold"}))
    return replay.reader().context(tenant, request)


_KEY = frozenset({"subject", "attribute"})
OPS: Mapping[str, Op] = {
    "define": Op(_define, frozenset({"attribute"}), writes=True, passthrough=True),
    "subject": Op(_subject, frozenset({"subject"}), writes=True, passthrough=True),
    "episode": Op(_episode, frozenset(), writes=True, passthrough=True),
    "update": Op(_update, frozenset({"episode", "candidate"}), writes=True),
    "current": Op(
        lambda replay, tenant, line: replay.store.facts.current(
            tenant, line["subject"], line["attribute"]
        ),
        _KEY,
    ),
    "at": Op(_at, _KEY, frozenset({"valid_at", "known_at"})),
    "history": Op(_history, _KEY),
    "profile": Op(_profile, frozenset({"subject"}), frozenset({"valid_at", "known_at"})),
    "expire": Op(_expire, _KEY | {"at", "source_episode_id"}, writes=True),
    "erase": Op(_erase, frozenset(), frozenset({"subject", "episode"}), writes=True),
    "retract": Op(_retract, _KEY, frozenset({"valid_from", "fact_id"}), writes=True),
    "resolve": Op(_resolve, _KEY | {"valid_from", "choose"}, writes=True),
    "search": Op(_search, frozenset({"query"}), passthrough=True),
    "context": Op(_context, frozenset({"question"}), passthrough=True),
}


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
    unknown = sorted(line.keys() - _COMMON - op.required - op.optional)
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
