"""The routes of working memory as calls: a thread's checkpoints, written and read.

Each returns a ``server.client.call.Call``: nothing here touches the network.
"""

from __future__ import annotations

from typing import Any

from server.client.call import Call, query_params, url_path
from store.contract.memory import Checkpoint
from store.contract.results import ErasureResult


def write_checkpoint(
    thread_id: str,
    *,
    active_goal_id: str | None = None,
    pending_dependency: str | None = None,
    state: dict[str, Any] | None = None,
    expected_version: int | None = None,
) -> Call[Checkpoint]:
    """Write the thread's next checkpoint; with ``expected_version``, only over that version
    (Conflict naming expected_version otherwise)."""
    body: dict[str, Any] = {
        "active_goal_id": active_goal_id,
        "pending_dependency": pending_dependency,
        "state": state or {},
    }
    if expected_version is not None:
        body["expected_version"] = expected_version
    path = url_path("/v1/threads/{}/checkpoint", thread_id)
    return Call("PUT", path, Checkpoint.model_validate_json, body=body)


def erase_thread(thread_id: str) -> Call[ErasureResult]:
    """Erase the thread's checkpoints and their receipts (NotFound when it has none)."""
    return Call("DELETE", url_path("/v1/threads/{}", thread_id), ErasureResult.model_validate_json)


def checkpoint(thread_id: str, *, version: int | None = None) -> Call[Checkpoint]:
    """The thread's latest checkpoint, or ``version`` (NotFound when there is none)."""
    path = url_path("/v1/threads/{}/checkpoint", thread_id)
    return Call("GET", path, Checkpoint.model_validate_json, params=query_params(version=version))
