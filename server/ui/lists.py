"""The pages that list: the tenant's subjects (found by id or name, a page at a time, by id or
by last change), an episode with the facts it is the source of, and a decision's receipts with
the memory-health verdict of a memory it needed. Each reads through the API's own store calls.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Request, get
from litestar.params import QueryParameter
from litestar.response import Redirect, Template
from pydantic import ValidationError

from server.routes.common import PathId
from server.routes.memory_health import judge
from server.runtime.resources import resources_of
from server.ui.decision_form import MemoryAsked, asked_expectation, why_invalid
from server.ui.pages import SECURITY_HEADERS, page
from server.ui.sessions import signed_in_guard, signed_in_of
from store.db.inputs import parse_uuid
from store.errors import InvalidInput, NotFound

SUBJECTS_PER_PAGE = 50

Cursor = Annotated[str | None, QueryParameter(max_length=1000)]
Match = Annotated[str | None, QueryParameter(max_length=200)]
Order = Annotated[Literal["id", "changed"], QueryParameter()]
DecisionId = Annotated[str, QueryParameter(max_length=100)]


@get("/subjects", sync_to_thread=True, guards=[signed_in_guard])
def subjects_page(
    request: Request[Any, Any, Any],
    cursor: Cursor = None,
    match: Match = None,
    order: Order = "id",
) -> Template:
    """The tenant's subjects whose id or a name holds ``match``, each with its keys, open
    conflicts and last change; by id or newest change first, a page at a time."""
    signed_in = signed_in_of(request)
    store = resources_of(request.app).store
    found = store.subjects.overview(
        signed_in.tenant_id, limit=SUBJECTS_PER_PAGE, cursor=cursor, match=match, order=order
    )
    return page(
        "subjects.html.j2",
        signed_in=signed_in,
        overview=found,
        match=(match or "").strip(),
        order=order,
        first_page=cursor is None,
    )


@get("/episodes/{episode_id:str}", sync_to_thread=True, guards=[signed_in_guard])
def episode_page(request: Request[Any, Any, Any], episode_id: PathId) -> Template:
    """An episode's text and where it came from, its outcome, extraction state and retention
    class, and every fact version it is the source of (each linking to its subject's page)."""
    signed_in = signed_in_of(request)
    store = resources_of(request.app).store
    tenant_id = signed_in.tenant_id
    episode = store.episodes.get(tenant_id, episode_id)
    try:
        outcome = store.outcomes.current(tenant_id, episode_id)
    except NotFound:
        outcome = None
    return page(
        "episode.html.j2",
        signed_in=signed_in,
        episode=episode,
        facts=store.facts.sourced(tenant_id, episode_id),
        outcome=outcome,
        extraction=store.extraction.state(tenant_id, episode_id),
    )


@get("/decisions", sync_to_thread=False, guards=[signed_in_guard], status_code=303)
def decision_lookup(decision_id: DecisionId) -> Redirect:
    """The decision id form: on to that decision's page (a malformed id is refused there)."""
    try:
        wanted = parse_uuid(decision_id.strip(), "decision_id")
    except InvalidInput:
        raise InvalidInput(
            f"'{decision_id}' is not a decision id: write the UUID its reads sent as"
            " X-SGAM-Decision.",
            field="decision_id",
        ) from None
    return Redirect(f"/ui/decisions/{wanted}", status_code=303, headers=SECURITY_HEADERS)


@get("/decisions/{decision_id:str}", sync_to_thread=True, guards=[signed_in_guard])
def decision_page(request: Request[Any, Any, Any], decision_id: PathId) -> Template:
    """A decision's receipts, content-free as the API gives them, and, for a memory the form
    names, the memory-health verdict the API's classifier gives from them."""
    signed_in = signed_in_of(request)
    store = resources_of(request.app).store
    receipts = store.receipts.decision(signed_in.tenant_id, decision_id)
    asked = MemoryAsked.of(request.query_params)
    verdict, error = None, None
    if asked.type:
        try:
            expectation = asked_expectation(receipts.decision_id, asked)
        except ValidationError as invalid:
            error = why_invalid(invalid)
        else:
            verdict = judge(store, signed_in.tenant_id, [expectation])
    return page(
        "decision.html.j2",
        status_code=422 if error else 200,
        signed_in=signed_in,
        receipts=receipts,
        asked=asked,
        verdict=verdict,
        error=error,
    )


list_routes = [subjects_page, episode_page, decision_lookup, decision_page]
"""The listing pages' handlers, for the pages' router."""
