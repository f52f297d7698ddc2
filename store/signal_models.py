"""A buffered weak signal as answers show it (its rules live in ``store.weak_signals``)."""

from __future__ import annotations

from uuid import UUID

from pydantic import BaseModel

from store.models import Timestamp
from store.values import JsonValue


class BufferedSignal(BaseModel):
    """A weak candidate waiting in the buffer for independent support."""

    signal_id: UUID
    subject: str
    attribute: str
    value: JsonValue
    episode_id: str
    content_hash: str
    evidence: str | None
    evidence_verified: bool
    valid_from: Timestamp
    buffered_at: Timestamp
    expires_at: Timestamp
