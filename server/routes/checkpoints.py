"""``/v1/threads/{thread_id}/checkpoint``: working memory, a thread's checkpoints."""

from __future__ import annotations

from typing import Annotated

from litestar import Response, Router, delete, get, put, route
from litestar.enums import HttpMethod
from litestar.params import JSONBody, QueryParameter
from litestar.types import ControllerRouterHandler

from server.http.trace import RequestTrace
from server.routes.common import PROBLEM_RESPONSES, PathId, Store, TenantId
from store.contract.memory import MAX_VERSION, Checkpoint, CheckpointWrite
from store.contract.results import ErasureResult

CheckpointVersion = Annotated[
    int | None,
    QueryParameter(ge=1, le=MAX_VERSION, description="A version to read; default the latest."),
]


# 200, not 201: the path names the thread's latest checkpoint, which every write replaces;
# the versions it replaced stay readable with ?version=.
@put("/", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def write_checkpoint(
    *,
    store: Store,
    tenant_id: TenantId,
    thread_id: PathId,
    data: JSONBody[CheckpointWrite],
    trace: RequestTrace,
) -> Checkpoint:
    """Write the thread's next checkpoint version (compare-and-set with ``expected_version``)."""
    return store.checkpoints.write_checkpoint(tenant_id, thread_id, data, trace=trace)


@get("/", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def read_checkpoint(
    *,
    store: Store,
    tenant_id: TenantId,
    thread_id: PathId,
    trace: RequestTrace,
    version: CheckpointVersion = None,
) -> Checkpoint:
    """The thread's latest checkpoint, or the version asked for; 404 when there is none.

    With ``X-SGAM-Decision`` the read leaves a receipt under that decision.
    """
    return store.checkpoints.read_checkpoint(tenant_id, thread_id, version=version, trace=trace)


@delete(
    "/v1/threads/{thread_id:str}", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES
)
def erase_thread(*, store: Store, tenant_id: TenantId, thread_id: PathId) -> ErasureResult:
    """Erase a thread: its checkpoints and their receipts go, a content-free tombstone stays.
    404 when it has no checkpoint."""
    return store.checkpoints.erase(tenant_id, thread_id)


_METHODS = ", ".join(sorted({*read_checkpoint.http_methods, *write_checkpoint.http_methods}))


@route("/", http_method=HttpMethod.OPTIONS, include_in_schema=False, sync_to_thread=False)
def checkpoint_options() -> Response[None]:
    """Both methods of the path (Litestar's own answer lists only the first registered)."""
    return Response(None, status_code=204, headers={"Allow": f"{_METHODS}, OPTIONS"})


# The options handler comes first, so that Litestar does not make its own for this path.
thread_router = Router(
    "/v1/threads/{thread_id:str}/checkpoint",
    route_handlers=[checkpoint_options, read_checkpoint, write_checkpoint],
)
checkpoint_routes: list[ControllerRouterHandler] = [thread_router, erase_thread]
