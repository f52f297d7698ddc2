"""What the sync and the async client share: settings, headers, reading answers, the routes.

Each route is declared once, in ``Routes``, as a ``Route`` over a pure builder from
``calls``; a client binds it to its transport, so ``SGAMClient.fact`` returns a ``Fact``
and ``AsyncSGAMClient.fact`` a coroutine of one, from the same declaration.
"""

from __future__ import annotations

import copy
import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from typing import Any, Generic, ParamSpec, Protocol, Self, TypeVar, overload
from uuid import UUID

import httpx

from server.client import (
    calls,
    checkpoint_calls,
    episodic_calls,
    procedure_calls,
    read_calls,
    receipt_calls,
    retention_calls,
    weak_signal_calls,
)
from server.client.call import Call, Instant, instant
from server.client.errors import error_from, is_problem
from store.contract.problems import (
    CLOCK_HEADER,
    DECISION_HEADER,
    FRESHNESS_HEADER,
    PROBLEM_MEDIA_TYPE,
    SCOPE_HEADER,
)

T = TypeVar("T")
P = ParamSpec("P")
H = TypeVar("H", httpx.Client, httpx.AsyncClient)

DEFAULT_TIMEOUT = 30.0


class Page(Protocol):
    """A page of a list: its items, and the cursor of the next page (None on the last)."""

    @property
    def next_cursor(self) -> str | None: ...


def read(call: Call[T], response: httpx.Response) -> T:
    """The call's result from the response, or the SGAMError the response stands for."""
    if not is_problem(response) and (response.is_success or response.status_code in call.accept):
        return call.parse(response.content)
    raise error_from(response)


class ClientBase(ABC, Generic[H]):
    """Where the server is, which credentials and clock to send, and the HTTP client to use."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        admin_token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        now: Instant | None = None,
        http: H | None = None,
    ) -> None:
        """``now`` sets ``X-SGAM-Now`` on every call; ``http`` (kept open on close) is reused."""
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.admin_token = admin_token
        self.timeout = timeout
        self.now = None if now is None else instant(now)
        self.trace: dict[str, str] = {}
        self.owns_http = http is None
        self.http: H = self._open_http() if http is None else http

    @abstractmethod
    def _open_http(self) -> H:
        """A new HTTP client, closed with this one."""

    def with_now(self, now: Instant | None) -> Self:
        """A client on the same connection whose calls carry ``X-SGAM-Now: now`` (None: none)."""
        other = copy.copy(self)
        other.now = None if now is None else instant(now)
        other.owns_http = False
        return other

    def for_decision(
        self,
        decision_id: UUID | str,
        *,
        scope: str | None = None,
        freshness_budget_s: int | None = None,
    ) -> Self:
        """A client on the same connection whose reads are made for the decision
        ``decision_id`` (``X-SGAM-Decision``): they leave content-free receipts under it, in
        the caller's ``scope`` (``X-SGAM-Scope``) with its ``freshness_budget_s``."""
        other = copy.copy(self)
        other.trace = {DECISION_HEADER: str(decision_id)}
        if scope is not None:
            other.trace[SCOPE_HEADER] = scope
        if freshness_budget_s is not None:
            other.trace[FRESHNESS_HEADER] = str(freshness_budget_s)
        other.owns_http = False
        return other

    def request_args(self, call: Call[Any]) -> dict[str, Any]:
        """The arguments of ``httpx.Client.request`` for the call."""
        headers = {"Accept": f"application/json, {PROBLEM_MEDIA_TYPE}"}
        token = self.admin_token if call.admin else self.api_key
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if self.now is not None:
            headers[CLOCK_HEADER] = self.now
        headers.update(self.trace)
        return {
            "method": call.method,
            "url": self.base_url + call.path,
            "params": call.params or None,
            "json": call.body,
            "headers": headers,
            "timeout": self.timeout,
        }


class SyncSender(ABC):
    """Sends a call and returns its result."""

    @abstractmethod
    def send(self, call: Call[T]) -> T:
        """The call's result (SGAMError when the server refuses it)."""


class AsyncSender(ABC):
    """Sends a call and awaits its result."""

    @abstractmethod
    async def send(self, call: Call[T]) -> T:
        """The call's result (SGAMError when the server refuses it)."""


class Route(Generic[P, T]):
    """A route's builder; read from a client, a method sending what it builds."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build
        self.__doc__ = build.__doc__
        # help() shows the builder's parameters, not its Call return type.
        self.signature = inspect.signature(build).replace(return_annotation=inspect.Parameter.empty)

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Self: ...
    @overload
    def __get__(self, client: SyncSender, owner: type[Any]) -> Callable[P, T]: ...
    @overload
    def __get__(
        self, client: AsyncSender, owner: type[Any]
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(
        self, client: SyncSender | AsyncSender | None, owner: type[Any]
    ) -> Self | Callable[P, Any]:
        if client is None:
            return self
        build, send = self.build, client.send

        @functools.wraps(build)
        def method(*args: P.args, **kwargs: P.kwargs) -> Any:
            return send(build(*args, **kwargs))

        method.__signature__ = self.signature  # type: ignore[attr-defined]
        return method


class Routes:
    """Every route of the API, once (each builder's docstring is its method's)."""

    create_tenant = Route(calls.create_tenant)
    tenant = Route(calls.tenant)
    change_tenant = Route(calls.change_tenant)
    create_key = Route(calls.create_key)
    revoke_key = Route(calls.revoke_key)

    declare_attribute = Route(calls.declare_attribute)
    migrate_attribute = Route(calls.migrate_attribute)
    attributes = Route(calls.attributes)
    memory_update_schema = Route(calls.memory_update_schema)

    record_episode = Route(calls.record_episode)
    record_batch = Route(calls.record_batch)
    episode = Route(calls.episode)
    apply_candidates = Route(calls.apply_candidates)
    erase_episode = Route(calls.erase_episode)
    record_outcome = Route(episodic_calls.record_outcome)
    outcome = Route(episodic_calls.outcome)
    retry_extraction = Route(episodic_calls.retry_extraction)
    experiences = Route(episodic_calls.experiences)

    fact = Route(calls.fact)
    history = Route(calls.history)
    expire = Route(calls.expire)
    retract = Route(calls.retract)

    subjects = Route(read_calls.subjects)
    profile = Route(read_calls.profile)
    export_subject = Route(read_calls.export_subject)
    merge_subject = Route(read_calls.merge_subject)
    put_subject_names = Route(read_calls.put_subject_names)
    subject_names = Route(read_calls.subject_names)
    erase_subject = Route(read_calls.erase_subject)

    conflicts = Route(read_calls.conflicts)
    resolve_conflict = Route(read_calls.resolve_conflict)

    buffer = Route(weak_signal_calls.buffer)

    declare_retention_class = Route(retention_calls.declare_retention_class)
    retention_classes = Route(retention_calls.retention_classes)
    place_legal_hold = Route(retention_calls.place_legal_hold)
    release_legal_hold = Route(retention_calls.release_legal_hold)
    purged_fact = Route(retention_calls.purged_fact)

    search = Route(read_calls.search)
    context = Route(read_calls.context)

    write_checkpoint = Route(checkpoint_calls.write_checkpoint)
    checkpoint = Route(checkpoint_calls.checkpoint)
    erase_thread = Route(checkpoint_calls.erase_thread)

    create_procedure = Route(procedure_calls.create_procedure)
    approve_procedure = Route(procedure_calls.approve_procedure)
    activate_procedure = Route(procedure_calls.activate_procedure)
    roll_back_procedure = Route(procedure_calls.roll_back_procedure)
    active_procedure = Route(procedure_calls.active_procedure)

    decision_receipts = Route(receipt_calls.decision_receipts)
    classify_health = Route(receipt_calls.classify_health)

    healthz = Route(read_calls.healthz)
    readyz = Route(read_calls.readyz)
