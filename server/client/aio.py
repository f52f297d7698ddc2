"""``AsyncSGAMClient``: the API over an ``httpx.AsyncClient``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import partial
from types import TracebackType
from typing import Literal, Self, TypeVar

import httpx

from server.client import read_calls
from server.client.base import AsyncSender, ClientBase, Page, Routes, read
from server.client.call import Call
from server.client.errors import unreachable
from store.contract.facts import ConflictRecord

T = TypeVar("T")
PageT = TypeVar("PageT", bound=Page)


class AsyncSGAMClient(ClientBase[httpx.AsyncClient], AsyncSender, Routes):
    """``SGAMClient`` for asyncio and trio: the same methods, each awaited.

    ``async with AsyncSGAMClient(base_url, api_key) as client: await client.fact(...)``.
    """

    def _open_http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=self.timeout)

    async def send(self, call: Call[T]) -> T:
        """Send one call from ``server.client.calls`` and return its result."""
        try:
            response = await self.http.request(**self.request_args(call))
        except httpx.RequestError as error:
            raise unreachable(error, self.base_url) from error
        return read(call, response)

    async def iter_subjects(self, *, page_size: int = 100) -> AsyncIterator[str]:
        """Every subject id, by id, following ``next_cursor`` page after page."""
        async for page in self._pages(partial(read_calls.subjects, limit=page_size)):
            for subject in page.subjects:
                yield subject

    async def iter_conflicts(
        self, *, status: Literal["open", "resolved", "all"] = "open", page_size: int = 100
    ) -> AsyncIterator[ConflictRecord]:
        """Every conflict with that status, oldest first, page after page."""
        async for page in self._pages(
            partial(read_calls.conflicts, status=status, limit=page_size)
        ):
            for conflict in page.conflicts:
                yield conflict

    async def _pages(self, page_at: Callable[..., Call[PageT]]) -> AsyncIterator[PageT]:
        cursor: str | None = None
        while True:
            page = await self.send(page_at(cursor=cursor))
            yield page
            if (cursor := page.next_cursor) is None:
                return

    async def aclose(self) -> None:
        """Close the HTTP client if this client opened it."""
        if self.owns_http:
            await self.http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
