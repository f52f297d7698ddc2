"""The pages' writes: the tenant's open conflicts and their resolution, a subject's erasure and
its legal hold.

Each write is a POST form carrying the session's CSRF token (``server.ui.sessions``) and goes
through the store call the API's own route makes (``store.conflicts.resolve``,
``store.erasure.erase_subject``, ``store.retention.place_hold``/``release_hold``), so it is
recorded as the API's would be: the conflict's resolution and the version it writes, the
erasure's tombstone, the hold. Erasure and hold each have a confirmation page first, and the
POST itself refuses to act without the confirmation its form asks for: typing the subject's id
to erase it, ticking a box to place or release a hold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlencode
from uuid import UUID

import anyio.to_thread
from litestar import Request, get, post
from litestar.params import QueryParameter
from litestar.response import Redirect, Template

from server.routes.common import PathId, PathUuid, QueryId
from server.runtime.resources import resources_of
from server.ui.pages import SECURITY_HEADERS, page
from server.ui.sessions import SignedIn, check_csrf, signed_in_guard, signed_in_of
from store.contract.facts import ConflictRecord, Fact
from store.contract.values import display
from store.errors import InvalidInput
from store.service import MemoryStore

CONFLICTS_PER_PAGE = 50
_MAX_FIELD = 400
_T = TypeVar("_T")

Choice = Literal["incumbent", "challenger"]
HoldAction = Literal["place", "release"]
Cursor = Annotated[str | None, QueryParameter(max_length=1000)]
ChoiceShown = Annotated[Choice | None, QueryParameter()]
HoldDone = Annotated[Literal["placed", "released"] | None, QueryParameter()]


@dataclass(frozen=True, slots=True)
class OpenConflict:
    """A conflict with its incumbent's version as believed now (None if none is current), and
    both sides' values as one line of text each (strings bare, other values as JSON)."""

    conflict: ConflictRecord
    incumbent: Fact | None

    @property
    def incumbent_value(self) -> str | None:
        return None if self.incumbent is None else display(self.incumbent.value)

    @property
    def challenger_value(self) -> str:
        return display(self.conflict.challenger.value)


def _incumbents(
    store: MemoryStore, tenant_id: str, conflicts: list[ConflictRecord]
) -> dict[UUID, Fact]:
    """The versions believed now of each conflicted key, by fact id (a fact retracted or
    replaced since has none): one history read per key, however many conflicts it has."""
    found: dict[UUID, Fact] = {}
    for subject, attribute in sorted({(c.subject, c.attribute) for c in conflicts}):
        for version in store.facts.history(tenant_id, subject, attribute):
            if version.retired_at is None:
                found[version.fact_id] = version
    return found


def _field(form: dict[str, Any], name: str) -> str:
    """A form's text field, empty when absent or too long."""
    value = form.get(name)
    return value.strip() if isinstance(value, str) and len(value) <= _MAX_FIELD else ""


async def _in_thread(call: Callable[[], _T]) -> _T:
    return await anyio.to_thread.run_sync(call)


async def _checked_form(request: Request[Any, Any, Any]) -> tuple[SignedIn, dict[str, Any]]:
    """The request's session and form, refused (``CsrfRefused``) without the session's token."""
    signed_in = signed_in_of(request)
    form = dict(await request.form())
    check_csrf(signed_in, form)
    return signed_in, form


def _one_of(form: dict[str, Any], name: str, options: tuple[str, ...], message: str) -> str:
    """A form field that must be one of ``options``; otherwise a 422 page saying ``message``."""
    value = _field(form, name)
    if value not in options:
        raise InvalidInput(message, field=name)
    return value


@get("/conflicts", sync_to_thread=True, guards=[signed_in_guard])
def conflicts_page(
    request: Request[Any, Any, Any],
    *,
    cursor: Cursor = None,
    subject: QueryId = None,
    resolved: QueryId = None,
    attribute: QueryId = None,
    chose: ChoiceShown = None,
) -> Template:
    """The tenant's open conflicts (of ``subject`` when given), oldest first, each with both
    sides and a resolve form; after a resolution, what was chosen (``resolved``, ``attribute``,
    ``chose``)."""
    signed_in = signed_in_of(request)
    store = resources_of(request.app).store
    found = store.conflicts.list(
        signed_in.tenant_id,
        status="open",
        subject=subject,
        limit=CONFLICTS_PER_PAGE,
        cursor=cursor,
    )
    versions = _incumbents(store, signed_in.tenant_id, found.conflicts)
    rows = [OpenConflict(c, versions.get(c.incumbent_fact_id)) for c in found.conflicts]
    done = None
    if resolved and attribute and chose:
        done = {"subject": resolved, "attribute": attribute, "chose": chose}
    return page(
        "conflicts.html.j2",
        signed_in=signed_in,
        rows=rows,
        next_page=_next_page(found.next_cursor, subject),
        subject=subject,
        done=done,
    )


def _next_page(cursor: str | None, subject: str | None) -> str | None:
    """The next page's query string, or None on the last page."""
    if cursor is None:
        return None
    return urlencode({"cursor": cursor} | ({"subject": subject} if subject else {}))


@post("/conflicts/{conflict_id:str}/resolve", status_code=303, guards=[signed_in_guard])
async def resolve_conflict_form(request: Request[Any, Any, Any], conflict_id: PathUuid) -> Redirect:
    """Settle a conflict as the API's resolve does; back to the list, saying what was chosen."""
    signed_in, form = await _checked_form(request)
    choose = _one_of(
        form, "choose", ("incumbent", "challenger"), "Choose the incumbent or the challenger."
    )
    store = resources_of(request.app).store
    chosen: Choice = "incumbent" if choose == "incumbent" else "challenger"
    result = await _in_thread(
        partial(store.conflicts.resolve, signed_in.tenant_id, conflict_id, choose=chosen)
    )
    shown = {
        "resolved": result.conflict.subject,
        "attribute": result.conflict.attribute,
        "chose": chosen,
    }
    return Redirect(f"/ui/conflicts?{urlencode(shown)}", status_code=303, headers=SECURITY_HEADERS)


def _confirmation(
    request: Request[Any, Any, Any],
    template: str,
    subject: str,
    *,
    error: str | None,
    done: str | None = None,
) -> Template:
    """An action's confirmation page: what the subject holds (404 when nothing), the form,
    and ``error`` (422) when a post came unconfirmed or ``done`` after one went through."""
    signed_in = signed_in_of(request)
    exported = resources_of(request.app).store.subjects.export(signed_in.tenant_id, subject)
    return page(
        template,
        status_code=422 if error else 200,
        signed_in=signed_in,
        subject=subject,
        exported=exported,
        error=error,
        done=done,
    )


@get("/subjects/{subject:str}/erase", sync_to_thread=True, guards=[signed_in_guard])
def erase_confirmation(request: Request[Any, Any, Any], subject: PathId) -> Template:
    """Ask before erasing: the subject's id must be typed in to go on."""
    return _confirmation(request, "erase.html.j2", subject, error=None)


@post("/subjects/{subject:str}/erase", status_code=200, guards=[signed_in_guard])
async def erase_subject_form(request: Request[Any, Any, Any], subject: PathId) -> Template:
    """Erase the subject as the API's erasure does, once its id was typed in; its receipt."""
    signed_in, form = await _checked_form(request)
    if _field(form, "confirm") != subject:
        error = f"Type the subject's id, {subject}, to confirm: nothing was erased."
        return await _in_thread(
            partial(_confirmation, request, "erase.html.j2", subject, error=error)
        )
    store = resources_of(request.app).store
    receipt = await _in_thread(partial(store.erasure.erase_subject, signed_in.tenant_id, subject))
    return page("erased.html.j2", signed_in=signed_in, subject=subject, receipt=receipt)


@get("/subjects/{subject:str}/legal-hold", sync_to_thread=True, guards=[signed_in_guard])
def legal_hold_page(
    request: Request[Any, Any, Any], subject: PathId, done: HoldDone = None
) -> Template:
    """Place or release the subject's legal hold, each behind a box to tick."""
    return _confirmation(request, "legal_hold.html.j2", subject, error=None, done=done)


@post("/subjects/{subject:str}/legal-hold", status_code=303, guards=[signed_in_guard])
async def legal_hold_form(request: Request[Any, Any, Any], subject: PathId) -> Template | Redirect:
    """Place or release the hold as the API does, once confirmed; back to the hold's page."""
    signed_in, form = await _checked_form(request)
    action = _one_of(form, "action", ("place", "release"), "Place or release the hold.")
    if _field(form, "confirm") != "yes":
        error = f"Tick the box to {action} the hold: nothing was changed."
        return await _in_thread(
            partial(_confirmation, request, "legal_hold.html.j2", subject, error=error)
        )
    retention = resources_of(request.app).store.retention
    change = retention.place_hold if action == "place" else retention.release_hold
    await _in_thread(partial(change, signed_in.tenant_id, subject))
    done = "placed" if action == "place" else "released"
    return Redirect(
        f"/ui/subjects/{subject}/legal-hold?done={done}", status_code=303, headers=SECURITY_HEADERS
    )


action_routes = [
    conflicts_page,
    resolve_conflict_form,
    erase_confirmation,
    erase_subject_form,
    legal_hold_page,
    legal_hold_form,
]
"""The handlers ``server.ui.routes`` registers under ``/ui``."""
