"""The routes of retention classes, legal holds and purged facts as calls.

Returns a ``server.client.call.Call``: nothing here touches the network.
"""

from __future__ import annotations

from uuid import UUID

from server.client.call import Call, url_path
from store.contract.bodies import RetentionClassList
from store.contract.governance import CountsFrom, Hold, PurgedFact, RetentionClass


def declare_retention_class(
    name: str, keep_days: int | None, *, counts_from: CountsFrom | None = None
) -> Call[RetentionClass]:
    """Declare or override a retention class; ``keep_days`` None keeps for ever."""
    body: dict[str, object] = {"keep_days": keep_days}
    if counts_from is not None:
        body["counts_from"] = counts_from
    path = url_path("/v1/retention-classes/{}", name)
    return Call("PUT", path, RetentionClass.model_validate_json, body=body)


def retention_classes() -> Call[RetentionClassList]:
    """Every retention class of the tenant: the defaults unless overridden, and its own."""
    return Call("GET", "/v1/retention-classes", RetentionClassList.model_validate_json)


def place_legal_hold(subject: str) -> Call[Hold]:
    """Hold the subject: the purge skips it and erasing it answers 409 legal_hold."""
    path = url_path("/v1/subjects/{}/legal-hold", subject)
    return Call("POST", path, Hold.model_validate_json)


def release_legal_hold(subject: str) -> Call[Hold]:
    """Release the subject's legal hold."""
    path = url_path("/v1/subjects/{}/legal-hold", subject)
    return Call("DELETE", path, Hold.model_validate_json)


def purged_fact(fact_id: UUID | str) -> Call[PurgedFact]:
    """Resolve a fact id the retention purge deleted whole (404 for any other)."""
    path = url_path("/v1/purged-facts/{}", fact_id)
    return Call("GET", path, PurgedFact.model_validate_json)
