"""A server that cannot be reached, or does not answer, is the client's own error."""

from __future__ import annotations

import asyncio

import pytest

from server.client import AsyncSGAMClient, SGAMClient, SGAMError, Timeout, Unavailable

pytestmark = pytest.mark.http


def test_a_server_that_is_down_raises_unavailable(closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}"
    with SGAMClient(url, "sgam_key", timeout=2.0) as client, pytest.raises(Unavailable) as down:
        client.fact("mira", "plan")
    error = down.value
    assert not isinstance(error, Timeout)
    assert isinstance(error, SGAMError)
    assert (error.status, error.code) == (503, "unavailable")
    assert url in error.detail


def test_a_server_that_does_not_answer_raises_timeout(listening_port: int) -> None:
    url = f"http://127.0.0.1:{listening_port}"
    with SGAMClient(url, "sgam_key", timeout=0.3) as client, pytest.raises(Timeout) as late:
        client.fact("mira", "plan")
    assert (late.value.status, late.value.code) == (504, "unavailable")


def test_the_async_client_raises_the_same(closed_port: int, listening_port: int) -> None:
    async def both() -> tuple[BaseException, BaseException]:
        raised = []
        for port, timeout in ((closed_port, 2.0), (listening_port, 0.3)):
            async with AsyncSGAMClient(f"http://127.0.0.1:{port}", "k", timeout=timeout) as c:
                try:
                    await c.fact("mira", "plan")
                except SGAMError as error:
                    raised.append(error)
        return raised[0], raised[1]

    down, late = asyncio.run(both())
    assert type(down) is Unavailable
    assert type(late) is Timeout
