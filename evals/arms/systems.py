"""The systems the leakage evaluation compares, and what they share.

- ``sgam``: the real app with the clock header on, run in process by ``server.testing.app_client``
  (ASGI, no network) and driven by the typed client as any user drives it. Writes go out with
  ``X-SGAM-Now`` set to their line's ``now``, questions as ``POST /v1/context``.
- ``sgam_noisy``: the same, fed the lines through ``evals.arms.noise.noisy_lines`` first.
- ``dm`` and ``dm_recency``: descriptive memory, in ``evals.arms.baselines``.

Each ``open_*`` context manager gets a database of its own on the given server, so loads never
meet.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from time import perf_counter
from typing import Any

from retrieval.search.embeddings import Embedder
from server.client import SGAMClient, SGAMError
from server.settings import Settings
from server.testing import app_client
from store.bench import app_login, migrate_database, temporary_database
from store.contract.times import parse_timestamp

Line = dict[str, Any]

SYSTEM_NAMES = ("sgam", "sgam_noisy", "dm", "dm_recency")
WRITE_OPS = frozenset(
    {"define", "subject", "episode", "update", "expire", "retract", "resolve", "erase"}
)
"""Ops that change a memory; ``subject`` declares a subject's names (``PUT /v1/subjects/{id}``)."""
READ_OPS = frozenset({"current", "at", "history", "profile", "search", "context"})
DROPPED = "dropped"
"""The op of an update line a noisy extraction missed (kept for its ``now``)."""
TRANSPORT = (
    "SGAM through its HTTP API in process: the app from create_app (clock header on) over"
    " Litestar's TestClient (ASGI, no network), driven by the typed client"
)


def is_question(line: Mapping[str, Any]) -> bool:
    """Whether a replay line is a scored question: a context line carrying ``gold``."""
    return line.get("op") == "context" and "gold" in line


@dataclass(frozen=True)
class Question:
    """A question line with the clock it is asked at (``now``; None: the wall clock)."""

    tenant: str
    question: str
    subject: str | None
    valid_at: str | None
    known_at: str | None
    now: str | None
    gold: Mapping[str, Any]
    options: Mapping[str, Any]  # attributes, token_budget, evidence_k when the line has them

    @classmethod
    def from_line(cls, line: Mapping[str, Any], *, now: str | None) -> Question:
        """The question of a context line with ``gold``, asked at ``now``."""
        return cls(
            tenant=line["tenant"],
            question=line["question"],
            subject=line.get("subject"),
            valid_at=line.get("valid_at"),
            known_at=line.get("known_at"),
            now=now,
            gold=line["gold"],
            options={
                name: line[name]
                for name in ("attributes", "token_budget", "evidence_k")
                if name in line
            },
        )

    @property
    def resolved_known_at(self) -> datetime | None:
        """The system time the question reads: its known_at, else its now (None: no limit)."""
        instant = self.known_at or self.now
        return None if instant is None else parse_timestamp(instant)


@dataclass(frozen=True)
class Context:
    """What one system handed over for one question, and how long building it took."""

    text: str
    latency_ms: float
    plan: Mapping[str, Any] | None = None
    """The system's reading of the question, where it makes one: ``subject`` and ``mode``."""


# -- SGAM through its HTTP API -------------------------------------------------------------

_Writer = Callable[[SGAMClient, Mapping[str, Any]], str]
_SKIP = frozenset({"op", "tenant", "now"})


def body_fields(line: Mapping[str, Any], *drop: str) -> dict[str, Any]:
    """A line's fields without op, tenant, now and ``drop``: the request body it stands for."""
    return {name: value for name, value in line.items() if name not in _SKIP | set(drop)}


def _define(client: SGAMClient, line: Mapping[str, Any]) -> str:
    client.declare_attribute(line["attribute"], **body_fields(line, "attribute"))
    return "define"


def _subject(client: SGAMClient, line: Mapping[str, Any]) -> str:
    client.put_subject_names(
        line["subject"], display_name=line.get("display_name"), aliases=line.get("aliases", ())
    )
    return "subject"


def _episode(client: SGAMClient, line: Mapping[str, Any]) -> str:
    client.record_episode(**body_fields(line))
    return "episode"


def _update(client: SGAMClient, line: Mapping[str, Any]) -> str:
    [result] = client.apply_candidates(line["episode"], [line["candidate"]]).results
    return f"update {result.status}"


def _expire(client: SGAMClient, line: Mapping[str, Any]) -> str:
    result = client.expire(
        line["subject"],
        line["attribute"],
        at=line["at"],
        source_episode_id=line["source_episode_id"],
    )
    return f"expire {result.status}"


def _retract(client: SGAMClient, line: Mapping[str, Any]) -> str:
    result = client.retract(
        line["subject"],
        line["attribute"],
        valid_from=line.get("valid_from"),
        fact_id=line.get("fact_id"),
    )
    return f"retract {result.status}"


def _resolve(client: SGAMClient, line: Mapping[str, Any]) -> str:
    start = parse_timestamp(line["valid_from"])
    [conflict] = [
        conflict
        for conflict in client.iter_conflicts(status="open")
        if (conflict.subject, conflict.attribute, conflict.valid_from)
        == (line["subject"], line["attribute"], start)
    ]
    client.resolve_conflict(conflict.conflict_id, line["choose"])
    return "resolve"


def _erase(client: SGAMClient, line: Mapping[str, Any]) -> str:
    if "episode" in line:
        client.erase_episode(line["episode"])
    else:
        client.erase_subject(line["subject"])
    return "erase"


_WRITERS: Mapping[str, _Writer] = {
    "define": _define,
    "subject": _subject,
    "episode": _episode,
    "update": _update,
    "expire": _expire,
    "retract": _retract,
    "resolve": _resolve,
    "erase": _erase,
}


class SgamOverHttp:
    """One SGAM app loaded through its API: a tenant and an API key per tenant, made on first use.

    A write the server refuses (a problem answer) is counted, as replay reports it, and the
    load goes on; per-candidate outcomes are counted by status.
    """

    def __init__(self, admin: SGAMClient, *, extract: bool = False) -> None:
        self.admin = admin
        self.clients: dict[str, SGAMClient] = {}
        self.outcomes: Counter[str] = Counter()
        self.extract = extract
        """Episodes go through the server's extractor (``extract: now``); the history's own
        candidates (update lines) are not sent."""

    def client(self, tenant: str, now: str | None) -> SGAMClient:
        """The tenant's client with ``X-SGAM-Now: now`` (the tenant and key made if new)."""
        if tenant not in self.clients:
            admin = self.admin.with_now(now)
            admin.create_tenant(tenant)
            issued = admin.create_key(tenant)
            self.clients[tenant] = SGAMClient(
                self.admin.base_url, issued.api_key, http=self.admin.http
            )
        return self.clients[tenant].with_now(now)

    def write(self, line: Mapping[str, Any], now: str | None) -> None:
        """Send one write line at its system time."""
        if line["op"] == DROPPED or (self.extract and line["op"] == "update"):
            return
        try:
            client = self.client(line["tenant"], now)
            if self.extract and line["op"] == "episode":
                recorded = client.record_episode(**body_fields(line), extract="now")
                self.outcomes.update(f"extracted {r.status}" for r in recorded.extracted)
                self.outcomes[f"extraction {getattr(recorded.extraction, 'status', None)}"] += 1
                return
            self.outcomes[_WRITERS[line["op"]](client, line)] += 1
        except SGAMError as error:
            self.outcomes[f"{line['op']} refused ({error.code})"] += 1

    def ask(self, question: Question) -> Context:
        """``POST /v1/context`` at the question's clock; the context is the ``block``."""
        client = self.client(question.tenant, question.now)
        start = perf_counter()
        result = client.context(
            question.question,
            subject=question.subject,
            valid_at=question.valid_at,
            known_at=question.known_at,
            **question.options,
        )
        plan = {"subject": result.plan.subject, "mode": result.plan.mode}
        return Context(result.block, (perf_counter() - start) * 1000, plan)


@contextmanager
def open_sgam(
    server: str, *, embedder: Embedder, extractor: Settings | None = None
) -> Iterator[SgamOverHttp]:
    """SGAM on a fresh database of ``server``, migrated as ``sgam serve`` migrates on start;
    with ``extractor`` (settings naming one), episodes are extracted by it before answering."""
    with temporary_database(server) as conninfo:
        migrate_database(conninfo)
        settings = Settings(
            **app_login(conninfo),
            allow_clock_header=True,
            admin_token=secrets.token_urlsafe(24),
            pool_max_size=4,
            **_extractor_fields(extractor),
        )
        with app_client(settings, embedder=embedder) as admin:
            yield SgamOverHttp(admin, extract=extractor is not None)


def _extractor_fields(extractor: Settings | None) -> dict[str, Any]:
    if extractor is None:
        return {}
    fields = {name: getattr(extractor, name) for name in Settings.model_fields}
    # No worker thread: each episode is extracted in its own request, at its own clock.
    return {n: v for n, v in fields.items() if n.startswith("extractor_")} | {
        "extractor_in_server": False
    }
