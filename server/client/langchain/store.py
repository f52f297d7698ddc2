"""``SGAMStore``: LangGraph's ``BaseStore`` over the SGAM HTTP API.

A batch answers its reads (get, search, list namespaces) from the memory as it stood before
the batch, then applies its puts and deletes, the last op on an item winning: as LangGraph's
in-memory and PostgreSQL stores do. The puts and deletes of one batch are recorded in one
call (``POST /v1/episodes/batch``, one transaction) and take effect at one instant of the
store's clock.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar, cast

from langgraph.store.base import (
    BaseStore,
    GetOp,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    validate_op_namespace,
)

from server.client.aio import AsyncSGAMClient
from server.client.call import Call
from server.client.errors import SGAMError
from server.client.langchain import plans
from server.client.langchain.items import WHOLE_ITEM
from server.client.sync import SGAMClient
from store.contract.common import EpisodeKind

T = TypeVar("T")
ReadOp = GetOp | SearchOp | ListNamespacesOp
_TICK = timedelta(microseconds=1)


def utc_now() -> datetime:
    """The machine's clock, in UTC."""
    return datetime.now(UTC)


class SGAMStore(BaseStore):
    """LangGraph's store on SGAM: a namespace is a subject, a key an attribute, an item's
    value the fact the write path keeps for them (``server.client.langchain``).

    ``SGAMStore(client)`` on an ``SGAMClient`` (the tenant is its key's); ``async_client``
    serves ``abatch`` (without one, it runs ``batch`` on a thread). ``index_fields`` are the
    paths of a value whose text a put's episode records (LangGraph's ``fields``; ``$``, the
    default, is the whole value), ``episode_kind`` the kind of those episodes, ``clock`` the
    time writes take effect and reads ask at. TTLs are not supported: SGAM's retention
    classes say how long memory is kept.
    """

    supports_ttl = False

    def __init__(
        self,
        client: SGAMClient,
        *,
        async_client: AsyncSGAMClient | None = None,
        index_fields: Sequence[str] = (WHOLE_ITEM,),
        episode_kind: EpisodeKind = "event",
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.client = client
        self.async_client = async_client
        self.writer = plans.Writer(episode_kind, tuple(index_fields), plans.Schema())
        self.clock = clock
        self._last = datetime.min.replace(tzinfo=UTC)
        self._lock = threading.Lock()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Answer the reads, then apply the puts and deletes (see the module)."""
        checked, now = _checked(ops), self._now()
        results: list[Result] = [
            None if isinstance(op, PutOp) else drive(plans.read(op, now=now), self.client.send)
            for op in checked
        ]
        if writes := _last_writes(checked):
            drive(plans.write(writes, self.writer, now=now), self.client.send)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` on the async client, its reads concurrent."""
        checked = _checked(ops)
        if self.async_client is None:
            return await asyncio.to_thread(self.batch, checked)
        now, send = self._now(), self.async_client.send
        reads = {i: op for i, op in enumerate(checked) if not isinstance(op, PutOp)}
        answers = await asyncio.gather(
            *(adrive(plans.read(op, now=now), send) for op in reads.values())
        )
        results: list[Result] = [None] * len(checked)
        for i, answer in zip(reads, answers, strict=True):
            results[i] = answer
        if writes := _last_writes(checked):
            await adrive(plans.write(writes, self.writer, now=now), send)
        return results

    def _now(self) -> datetime:
        """The clock's time, always later than the last batch's, so that two batches never
        write one key at one instant (an equal start)."""
        with self._lock:
            self._last = max(self.clock(), self._last + _TICK)
            return self._last


def _checked(ops: Iterable[Op]) -> list[Op]:
    """The ops, each of a known kind with valid namespace labels."""
    checked = list(ops)
    for op in checked:
        if not isinstance(op, GetOp | SearchOp | ListNamespacesOp | PutOp):
            raise ValueError(f"Unknown operation type: {type(op)}")
        validate_op_namespace(op)
    return checked


def _last_writes(ops: Sequence[Op]) -> list[PutOp]:
    """The batch's last put or delete of each item, in the order of those last ops."""
    last: dict[tuple[tuple[str, ...], str], PutOp] = {}
    for op in ops:
        if isinstance(op, PutOp):
            place = (tuple(op.namespace), op.key)
            last.pop(place, None)
            last[place] = op
    return list(last.values())


def drive(plan: plans.Plan[T], send: Callable[[Call[Any]], Any]) -> T:
    """``adrive`` with a blocking sender: its coroutine never suspends, so one step runs it
    to the end, with no event loop."""

    async def sent(call: Call[Any]) -> Any:
        return send(call)

    runner = adrive(plan, sent)
    try:
        runner.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    runner.close()
    raise RuntimeError("a blocking send suspended")


async def adrive(plan: plans.Plan[T], send: Callable[[Call[Any]], Awaitable[Any]]) -> T:
    """Run a plan, sending each call it yields; the server's errors are thrown into it."""
    result: Any = None
    error: SGAMError | None = None
    while True:
        try:
            call = plan.send(result) if error is None else plan.throw(error)
        except StopIteration as done:
            return cast(T, done.value)
        try:
            result, error = await send(call), None
        except SGAMError as refused:
            result, error = None, refused
