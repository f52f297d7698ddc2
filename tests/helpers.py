"""Small builders shared by the tests: declare, record, assert in one line each."""

from __future__ import annotations

from typing import Any

from store.models import UpdateResult
from store.service import MemoryStore

KEY = ("mira", "passport_deadline")


def declare(
    store: MemoryStore,
    tenant: str,
    attribute: str = "passport_deadline",
    value_type: str = "date",
    **extra: Any,
) -> None:
    """Declare an attribute with a description."""
    store.declare_attribute(
        tenant, attribute, {"value_type": value_type, "description": f"the {attribute}", **extra}
    )


def record(
    store: MemoryStore,
    tenant: str,
    episode_id: str,
    occurred_at: str,
    text: str = "an episode",
    **extra: Any,
) -> None:
    """Record an episode."""
    store.record_episode(
        tenant, {"id": episode_id, "occurred_at": occurred_at, "text": text, **extra}
    )


def assert_value(
    store: MemoryStore,
    tenant: str,
    episode_id: str,
    value: str | None,
    valid_from: str | None = None,
    *,
    subject: str = "mira",
    attribute: str = "passport_deadline",
    **extra: Any,
) -> UpdateResult:
    """Apply one candidate citing ``episode_id``; return its result."""
    candidate: dict[str, Any] = {
        "evidence": "",
        "subject": subject,
        "attribute": attribute,
        "change": "update",
        "value": value,
        **extra,
    }
    if valid_from is not None:
        candidate["valid_from"] = valid_from
    [result] = store.apply_updates(tenant, episode_id, [candidate])
    return result
