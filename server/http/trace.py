"""The receipt headers: which decision a request serves, in which scope, with what freshness.

``X-SGAM-Decision`` makes a read leave receipts under that decision (a context call opens
one of its own when none is named); ``X-SGAM-Scope`` is the caller's scope string, hashed into
every receipt's scope; ``X-SGAM-Freshness-Budget`` is the age, in seconds, the caller allows.
A malformed one is 422 naming the header; none changes what a read answers.
"""

from __future__ import annotations

from typing import Annotated

from litestar.di import NamedDependency
from litestar.params import HeaderParameter, SkipValidation

from server.routes.common import Store
from store.contract.common import IDENTIFIER_PATTERN
from store.contract.problems import DECISION_HEADER, FRESHNESS_HEADER, SCOPE_HEADER
from store.db.inputs import check_identifier, parse_uuid
from store.errors import InvalidInput
from store.governance.receipts import Trace

# The values are checked here, so that a bad one is named by its header (Litestar would name
# the handler's parameter): the schema documents them, validation is skipped.
_STRING = {"type": "string", "one_of": None}
"""A header is a string when sent; absent, the handler sees None (not a null to send)."""
_Decision = Annotated[
    SkipValidation[str | None],
    HeaderParameter(
        name=DECISION_HEADER,
        schema_extra=_STRING,
        required=False,
        format="uuid",
        description="The decision this read is made for (a UUID, e.g. a context answer's"
        " decision_id): the read leaves content-free receipts under it.",
    ),
]
_Scope = Annotated[
    SkipValidation[str | None],
    HeaderParameter(
        name=SCOPE_HEADER,
        schema_extra=_STRING,
        required=False,
        pattern=IDENTIFIER_PATTERN,
        description="The caller's scope, e.g. project:acme, hashed into the receipts' scope.",
    ),
]
_Freshness = Annotated[
    SkipValidation[str | None],
    HeaderParameter(
        name=FRESHNESS_HEADER,
        schema_extra=_STRING,
        required=False,
        pattern=r"^[0-9]{1,18}$",
        description="The age in seconds the caller allows what it reads; receipts record it.",
    ),
]


def provide_trace(
    store: Store,
    decision: _Decision = None,
    caller_scope: _Scope = None,
    freshness: _Freshness = None,
) -> Trace:
    """The receipt headers, parsed; a malformed one is 422 naming it.

    It takes ``store`` only to come after it in the dependencies' one chain (``server.auth.guard``).
    """
    del store
    if caller_scope is not None:
        check_identifier(caller_scope, SCOPE_HEADER)
    budget = None
    if freshness is not None:
        if not freshness.isascii() or not freshness.isdigit() or len(freshness) > 18:
            raise InvalidInput(
                "give the freshness budget as whole seconds (0 or more)", field=FRESHNESS_HEADER
            )
        budget = int(freshness)
    return Trace(
        decision_id=None if decision is None else parse_uuid(decision, DECISION_HEADER),
        scope=caller_scope,
        freshness_budget_s=budget,
    )


RequestTrace = NamedDependency[SkipValidation[Trace]]
"""The request's receipt headers (``provide_trace``)."""
