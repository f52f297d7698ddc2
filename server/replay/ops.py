"""The replay operations: for each ``op``, the fields it takes and what it runs (design
section 9). ``server.replay.runner`` checks a line against its ``Op`` and runs it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from store.contract.reads import ContextRequest, SearchRequest
from store.db.inputs import parse_input
from store.errors import Conflict, InvalidInput, NotFound

if TYPE_CHECKING:
    from server.replay.runner import Replay

JsonObject = dict[str, Any]
COMMON = frozenset({"op", "tenant", "now"})
"""The fields every line may carry."""


@dataclass(frozen=True, slots=True)
class Op:
    """One replay operation: its fields and whether it writes."""

    run: Callable[[Replay, str, JsonObject], Any]
    required: frozenset[str]
    optional: frozenset[str] = frozenset()
    writes: bool = False
    passthrough: bool = False  # remaining fields form the body (define, episode)


def _body(line: JsonObject, *, drop: Iterable[str]) -> JsonObject:
    dropped = COMMON | set(drop)
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
    [result] = replay.store.facts.apply_candidates(tenant, line["episode"], [line["candidate"]])
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
