"""One clock (invariant 6): timestamps parse with an offset, live in UTC, print with ``Z``."""

from __future__ import annotations

from datetime import UTC, datetime


class TimestampError(ValueError):
    """A timestamp that is not RFC 3339 with an offset."""


def parse_timestamp(value: object) -> datetime:
    """Parse an RFC 3339 timestamp that carries an offset; return it in UTC.

    Naive input is refused rather than guessed: a timestamp without an offset names no instant.
    """
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            raise TimestampError(
                f"{value!r} is not an RFC 3339 timestamp (e.g. 2026-06-01T09:00:00Z)"
            ) from None
    else:
        raise TimestampError("a timestamp must be an RFC 3339 string")
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise TimestampError(f"{value!s} has no UTC offset; add one (e.g. 'Z' or '+02:00')")
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise TimestampError(f"{value!s} is outside years 1-9999 in UTC") from None


def format_timestamp(value: datetime) -> str:
    """RFC 3339 in UTC with a ``Z`` suffix (fractional seconds only when present)."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
