"""``/v1/retention-classes`` and ``/v1/subjects/{subject}/legal-hold``: memory that ends."""

from __future__ import annotations

from litestar import delete, get, post, put
from litestar.params import JSONBody

from server.routes.common import PROBLEM_RESPONSES, PathId, PathUuid, Store, TenantId
from store.contract.bodies import RetentionClassList
from store.contract.governance import Hold, PurgedFact, RetentionClass, RetentionClassDeclaration


@put("/v1/retention-classes/{name:str}", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def declare_retention_class(
    *, store: Store, tenant_id: TenantId, name: PathId, data: JSONBody[RetentionClassDeclaration]
) -> RetentionClass:
    """Declare a retention class, or override one (``ephemeral``, ``session``, ``standard``
    and ``permanent`` included); episodes and attributes may then name it."""
    return store.retention.declare_class(tenant_id, name, data)


@get("/v1/retention-classes", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def list_retention_classes(store: Store, tenant_id: TenantId) -> RetentionClassList:
    """Every retention class the tenant has, by name."""
    return RetentionClassList(classes=store.retention.classes(tenant_id))


@post(
    "/v1/subjects/{subject:str}/legal-hold",
    status_code=200,
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
)
def place_legal_hold(*, store: Store, tenant_id: TenantId, subject: PathId) -> Hold:
    """Hold the subject: the purge skips what is linked to it, and erasing it (or an episode
    linked to it) answers 409 ``legal_hold``. Placing it again changes nothing."""
    return store.retention.place_hold(tenant_id, subject)


@delete(
    "/v1/subjects/{subject:str}/legal-hold",
    status_code=200,
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
)
def release_legal_hold(*, store: Store, tenant_id: TenantId, subject: PathId) -> Hold:
    """Release the subject's hold (404 when it has none)."""
    return store.retention.release_hold(tenant_id, subject)


@get("/v1/purged-facts/{fact_id:str}", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def read_purged_fact(*, store: Store, tenant_id: TenantId, fact_id: PathUuid) -> PurgedFact:
    """Resolve a ``supersedes`` or ``ended_by`` whose fact the retention purge deleted whole:
    ``{status: purged, purged_at}``; 404 for an id that was not purged."""
    return store.retention.purged_fact(tenant_id, fact_id)


retention_routes = [
    declare_retention_class,
    list_retention_classes,
    place_legal_hold,
    release_legal_hold,
    read_purged_fact,
]
