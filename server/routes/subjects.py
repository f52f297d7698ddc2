"""``/v1/subjects``: list subjects, name one, read a profile, export, merge or erase everything
about one."""

from __future__ import annotations

from typing import Annotated

from litestar import Response, Router, delete, get, post, put, route
from litestar.enums import HttpMethod
from litestar.params import JSONBody, QueryParameter
from litestar.types import ControllerRouterHandler

from server.http.trace import RequestTrace
from server.routes.common import PROBLEM_RESPONSES, PathId, Store, TenantId, Times
from store.contract.bodies import MergeBody
from store.contract.facts import SubjectNamesDeclaration
from store.contract.results import (
    ErasureResult,
    MergeResult,
    Profile,
    SubjectExport,
    SubjectNames,
    SubjectPage,
)

Limit = Annotated[int, QueryParameter(ge=1, le=500, description="Page size.")]
Cursor = Annotated[
    str | None,
    QueryParameter(
        max_length=1000,
        description="`next_cursor` of the previous page. Opaque: any other value is refused"
        " (422, field cursor).",
    ),
]


Match = Annotated[
    str | None,
    QueryParameter(
        max_length=200,
        description="Only subjects whose id holds this text (case aside) or one of whose names"
        " holds it (case, accents and punctuation aside). Blank: every subject.",
    ),
]


@get("/v1/subjects", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def list_subjects(
    *,
    store: Store,
    tenant_id: TenantId,
    limit: Limit = 100,
    cursor: Cursor = None,
    match: Match = None,
) -> SubjectPage:
    """The tenant's subjects, by id; follow ``next_cursor`` for the next page. With ``match``,
    only those whose id or a name holds it."""
    return store.subjects.list(tenant_id, limit=limit, cursor=cursor, match=match)


@get("/v1/subjects/{subject:str}/profile", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def read_profile(
    *, store: Store, tenant_id: TenantId, subject: PathId, times: Times, trace: RequestTrace
) -> Profile:
    """Every attribute of the subject valid at ``valid_at`` as believed at ``known_at``.

    With ``X-SGAM-Decision`` the read leaves a receipt per fact under that decision.
    """
    return store.subjects.profile(
        tenant_id, subject, valid_at=times.valid_at, known_at=times.known_at, trace=trace
    )


@get("/v1/subjects/{subject:str}/export", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def export_subject(*, store: Store, tenant_id: TenantId, subject: PathId) -> SubjectExport:
    """Everything held about the subject: facts, every version, episodes, conflicts."""
    return store.subjects.export(tenant_id, subject)


@delete("/", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def erase_subject(*, store: Store, tenant_id: TenantId, subject: PathId) -> ErasureResult:
    """Erase everything held about the subject; leave a content-free tombstone.

    A subject with nothing held (never seen, or already erased) is 404, as for export.
    """
    return store.erasure.erase_subject(tenant_id, subject)


@post(
    "/v1/subjects/{subject:str}/merge",
    status_code=200,
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
)
def merge_subject(
    *, store: Store, tenant_id: TenantId, subject: PathId, data: JSONBody[MergeBody]
) -> MergeResult:
    """Fold the duplicate subject into ``into``: its facts, conflicts and episode links move.

    Keys both hold go through the write path (a later start supersedes, an equal start with
    another value is a conflict). The duplicate's id then names the survivor everywhere.
    422 (field ``into``) when ``into`` names the duplicate itself; 404 when nothing is held
    about the duplicate; 409 when it was already merged (field ``subject``) or ``into`` was
    merged into it (field ``into``).
    """
    return store.subjects.merge(tenant_id, subject, into=data.into)


@put("/", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def declare_names(
    *,
    store: Store,
    tenant_id: TenantId,
    subject: PathId,
    data: JSONBody[SubjectNamesDeclaration],
) -> SubjectNames:
    """Declare the subject's display name and aliases, replacing those declared before.

    Questions then find the subject by these names, whole or in part (a surname, the
    initials), as well as by its id and the names text wrote for it (``subject_name`` on a
    candidate, ``subject_names`` on an episode), which stay. A merged id names its survivor.
    """
    return store.subjects.declare_names(tenant_id, subject, data)


@get("/v1/subjects/{subject:str}/names", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def read_names(*, store: Store, tenant_id: TenantId, subject: PathId) -> SubjectNames:
    """The names a question may call the subject by: declared, and learned from episodes."""
    return store.subjects.names(tenant_id, subject)


_METHODS = ", ".join(sorted({*declare_names.http_methods, *erase_subject.http_methods}))


@route("/", http_method=HttpMethod.OPTIONS, include_in_schema=False, sync_to_thread=False)
def subject_options() -> Response[None]:
    """Both methods of the path (Litestar's own answer lists only the first registered)."""
    return Response(None, status_code=204, headers={"Allow": f"{_METHODS}, OPTIONS"})


# The options handler comes first, so that Litestar does not make its own for this path.
subject_router = Router(
    "/v1/subjects/{subject:str}", route_handlers=[subject_options, declare_names, erase_subject]
)
subject_routes: list[ControllerRouterHandler] = [
    list_subjects,
    subject_router,
    read_names,
    read_profile,
    export_subject,
    merge_subject,
]
