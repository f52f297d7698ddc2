"""``SGAMClient``: the API over a blocking ``httpx.Client``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from types import TracebackType
from typing import Literal, Self, TypeVar

import httpx

from server.client import read_calls
from server.client.base import ClientBase, Page, Routes, SyncSender, read
from server.client.call import Call
from server.client.errors import unreachable
from store.contract.facts import ConflictRecord

T = TypeVar("T")
PageT = TypeVar("PageT", bound=Page)


class SGAMClient(ClientBase[httpx.Client], SyncSender, Routes):
    """The SGAM HTTP API, one method per route, each returning the server's model.

    ``SGAMClient(base_url, api_key, admin_token=..., now=..., http=...)``; a problem answer
    raises ``SGAMError`` (``NotFound``, ``InvalidInput``...). Close it, or use ``with``.
    """

    def _open_http(self) -> httpx.Client:
        return httpx.Client(timeout=self.timeout)

    def send(self, call: Call[T]) -> T:
        """Send one call from ``server.client.calls`` and return its result."""
        try:
            response = self.http.request(**self.request_args(call))
        except httpx.RequestError as error:
            raise unreachable(error, self.base_url) from error
        return read(call, response)

    def iter_subjects(self, *, page_size: int = 100) -> Iterator[str]:
        """Every subject id, by id, following ``next_cursor`` page after page."""
        for page in self._pages(partial(read_calls.subjects, limit=page_size)):
            yield from page.subjects

    def iter_conflicts(
        self, *, status: Literal["open", "resolved", "all"] = "open", page_size: int = 100
    ) -> Iterator[ConflictRecord]:
        """Every conflict with that status, oldest first, page after page."""
        for page in self._pages(partial(read_calls.conflicts, status=status, limit=page_size)):
            yield from page.conflicts

    def _pages(self, page_at: Callable[..., Call[PageT]]) -> Iterator[PageT]:
        cursor: str | None = None
        while True:
            page = self.send(page_at(cursor=cursor))
            yield page
            if (cursor := page.next_cursor) is None:
                return

    def close(self) -> None:
        """Close the HTTP client if this client opened it."""
        if self.owns_http:
            self.http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
