"""Weak signals, the same on every surface: buffered, promoted by independent repetition or a
confirmation, expired, listed by page within their tenant, and held by a subject's export.

Each test on a tenant of its own, at system times set on the test's clock.
"""

from __future__ import annotations

from typing import Any

import pytest

from store.contract.memory import BufferedSignal
from store.contract.results import UpdateResult
from tests.conformance.surfaces import Json, Refused, Surface
from tests.conftest import ts
from tests.http_helpers import candidate
from tests.weak_helpers import NOW, weak


def _tenant(surface: Surface, **declaration: Any) -> Surface:
    """The surface's tenant, declaring ``export_format`` (a string) with ``declaration``."""
    surface.declare_attribute("export_format", {"value_type": "string", **declaration})
    return surface


def _say(
    surface: Surface,
    episode_id: str,
    text: str,
    *updates: Json,
    occurred_at: str = "2026-06-01T09:00:00Z",
    now: str = NOW,
    **extra: Any,
) -> list[UpdateResult]:
    """Record an episode carrying ``updates`` at system time ``now``; their results."""
    surface.clock.set(ts(now))
    episode = {"id": episode_id, "occurred_at": occurred_at, "text": text, **extra}
    return surface.record(episode, updates)


def _buffer(surface: Surface, now: str = NOW, subject: str | None = None) -> list[BufferedSignal]:
    surface.clock.set(ts(now))
    return surface.buffer(subject=subject).signals


def _known(surface: Surface, now: str = NOW) -> Any:
    """The value of mira's export_format at ``now``, or None when not known."""
    surface.clock.set(ts(now))
    try:
        fact = surface.fact("mira", "export_format")
    except Refused as refused:
        if refused.code != "not_found":
            raise
        return None
    return fact.value


def test_one_weak_signal_waits_and_a_second_independent_episode_promotes_it(
    surface: Surface,
) -> None:
    _tenant(surface)
    [first] = _say(surface, "e1", "Export that as CSV.", weak("csv"))
    assert (first.status, first.fact, first.supporting_episode_ids) == ("buffered", None, None)
    assert _known(surface) is None
    [waiting] = _buffer(surface)
    assert (waiting.episode_id, waiting.value, waiting.valid_from, waiting.expires_at) == (
        "e1",
        "csv",
        ts("2026-06-01T09:00:00Z"),
        ts("2026-07-10T00:00:00Z"),
    )

    [second] = _say(
        surface, "e2", "CSV again, please.", weak("csv"), occurred_at="2026-06-03T09:00:00Z"
    )
    assert (second.status, second.supporting_episode_ids) == ("written", ["e1"])
    assert second.fact is not None
    assert (second.fact.value, second.fact.source_episode_id, second.fact.valid_from) == (
        "csv",
        "e2",
        ts("2026-06-01T09:00:00Z"),
    )
    assert _known(surface) == "csv"
    assert _buffer(surface) == []
    # The supporting episode concerns the subject too.
    assert surface.episode("e1").subjects == ["mira"]


def test_the_same_episode_twice_does_not_promote(surface: Surface) -> None:
    _tenant(surface)
    _say(surface, "e1", "Export that as CSV.", weak("csv"))
    [again] = _say(surface, "e1", "Export that as CSV.", weak("csv"))
    assert again.status == "buffered"
    assert [r.status for r in surface.apply("e1", [weak("csv")])] == ["buffered"]
    assert _known(surface) is None
    assert [s.episode_id for s in _buffer(surface)] == ["e1"]


def test_another_id_with_the_same_text_is_no_independent_episode(surface: Surface) -> None:
    _tenant(surface)
    _say(surface, "e1", "Export that as CSV.", weak("csv"))
    [copy] = _say(
        surface, "e2", "Export that as CSV.", weak("csv"), occurred_at="2026-06-02T09:00:00Z"
    )
    assert copy.status == "buffered"
    assert copy.reason is not None
    assert "1 of 2" in copy.reason
    assert _known(surface) is None
    [third] = _say(surface, "e3", "CSV, as usual.", weak("csv"), occurred_at="2026-06-04T09:00:00Z")
    assert (third.status, third.supporting_episode_ids) == ("written", ["e1"])
    assert third.fact is not None
    assert third.fact.valid_from == ts("2026-06-01T09:00:00Z")


def test_a_confirmation_promotes_at_once(surface: Surface) -> None:
    _tenant(surface)
    [alone] = _say(surface, "c1", "Yes, always CSV.", weak("csv"), kind="user_confirmation")
    assert (alone.status, alone.supporting_episode_ids) == ("written", [])
    assert _known(surface) == "csv"

    other = _tenant(surface.other())
    _say(other, "e1", "Export that as CSV.", weak("csv"))
    [confirmed] = _say(
        other,
        "c1",
        "Yes, always CSV.",
        weak("csv"),
        occurred_at="2026-06-05T09:00:00Z",
        kind="user_confirmation",
    )
    assert (confirmed.status, confirmed.supporting_episode_ids) == ("written", ["e1"])
    assert confirmed.fact is not None
    fact = confirmed.fact
    assert (fact.source_episode_id, fact.source_kind, fact.valid_from) == (
        "c1",
        "user_confirmation",
        ts("2026-06-01T09:00:00Z"),
    )


def test_an_expired_signal_never_promotes(surface: Surface) -> None:
    _tenant(surface)
    _say(surface, "e1", "Export that as CSV.", weak("csv"))
    # Thirty days on (the default window) it is no longer listed, though nothing wrote since.
    assert _buffer(surface, now="2026-07-09T23:59:59Z") != []
    assert _buffer(surface, now="2026-07-10T00:00:00Z") == []
    late = "2026-07-20T00:00:00Z"
    [second] = _say(surface, "e2", "CSV again, please.", weak("csv"), occurred_at=late, now=late)
    assert second.status == "buffered"
    assert _known(surface, now=late) is None
    assert [s.episode_id for s in _buffer(surface, now=late)] == ["e2"]

    # A longer window keeps the first signal alive: the same pair promotes.
    patient = _tenant(surface.other(), weak_window_days=60)
    _say(patient, "e1", "Export that as CSV.", weak("csv"))
    [promoted] = _say(patient, "e2", "CSV again, please.", weak("csv"), occurred_at=late, now=late)
    assert promoted.status == "written"


def test_a_different_value_does_not_count_towards_the_quorum(surface: Surface) -> None:
    _tenant(surface)
    _say(surface, "e1", "Export that as CSV.", weak("csv"))
    [other] = _say(surface, "e2", "Maybe JSON?", weak("json"), occurred_at="2026-06-02T09:00:00Z")
    assert other.status == "buffered"
    assert _known(surface) is None
    [third] = _say(surface, "e3", "CSV again.", weak("csv"), occurred_at="2026-06-03T09:00:00Z")
    assert (third.status, third.supporting_episode_ids) == ("written", ["e1"])
    assert [(s.episode_id, s.value) for s in _buffer(surface)] == [("e2", "json")]


def test_strong_candidates_take_effect_at_once_beside_weak_ones(surface: Surface) -> None:
    _tenant(surface)
    surface.declare_attribute("city", {"value_type": "string"})
    strong = candidate("mira", "city", "Oslo", evidence="Oslo", change="new")
    results = _say(surface, "e1", "I live in Oslo; CSV please.", strong, weak("csv"))
    assert [(r.status, r.supporting_episode_ids) for r in results] == [
        ("written", None),
        ("buffered", None),
    ]
    assert surface.fact("mira", "city").value == "Oslo"
    assert [s.attribute for s in _buffer(surface)] == ["export_format"]


def test_the_quorum_is_declared_per_attribute(surface: Surface) -> None:
    _tenant(surface, weak_quorum=3)
    [attribute] = surface.attributes()
    assert (attribute.weak_quorum, attribute.weak_window_days) == (3, 30)
    texts = ("Export that as CSV.", "CSV again.", "CSV, as usual.")
    statuses = [
        _say(surface, f"e{n}", text, weak("csv"))[0].status for n, text in enumerate(texts, 1)
    ]
    assert statuses == ["buffered", "buffered", "written"]
    eager = _tenant(surface.other(), weak_quorum=1)
    assert _say(eager, "e1", texts[0], weak("csv"))[0].status == "written"
    for field, value in (("weak_quorum", 0), ("weak_quorum", 101), ("weak_window_days", 0)):
        with pytest.raises(Refused) as refused:
            surface.declare_attribute("other", {"value_type": "string", field: value})
        assert refused.value.fault == ("invalid", field)


def test_weak_candidates_are_checked_like_any_other(surface: Surface) -> None:
    _tenant(surface)
    surface.declare_attribute("seats", {"value_type": "integer"})
    results = _say(
        surface,
        "e1",
        "Ten seats, in CSV.",
        weak("csv", attribute="undeclared"),
        weak("ten", attribute="seats"),
    )
    assert [(r.status, r.field) for r in results] == [
        ("invalid", "attribute"),
        ("invalid", "value"),
    ]
    assert _buffer(surface) == []


def test_the_buffer_lists_pages_and_filters_within_its_tenant(surface: Surface) -> None:
    _tenant(surface)
    _say(surface, "e1", "CSV for Mira.", weak("csv"))
    _say(surface, "e2", "CSV for Kai.", weak("csv", subject="kai"), now="2026-06-11T00:00:00Z")
    surface.clock.set(ts(NOW))
    assert [s.subject for s in _buffer(surface)] == ["mira", "kai"]
    assert [s.subject for s in _buffer(surface, subject="kai")] == ["kai"]
    first = surface.buffer(limit=1)
    assert [s.subject for s in first.signals] == ["mira"]
    rest = surface.buffer(limit=1, cursor=first.next_cursor)
    assert ([s.subject for s in rest.signals], rest.next_cursor) == (["kai"], None)
    with pytest.raises(Refused) as bad_cursor:
        surface.buffer(cursor="nope")
    assert bad_cursor.value.fault == ("invalid", "cursor")

    stranger = _tenant(surface.other())
    assert _buffer(stranger) == []
    _say(stranger, "e1", "CSV for Mira.", weak("csv"))
    # The other tenant's signal for the same key and text does not count here either.
    assert _known(stranger) is None
    assert [s.subject for s in _buffer(surface)] == ["mira", "kai"]


def test_a_weak_signal_may_not_go_back_in_system_time(surface: Surface) -> None:
    _tenant(surface)
    strong = candidate("mira", "export_format", "json", evidence="JSON", change="new")
    _say(surface, "e1", "JSON, please.", strong)
    [late] = _say(surface, "e2", "CSV?", weak("csv"), now="2026-06-09T00:00:00Z")
    assert (late.status, late.field) == ("invalid", "now")
    assert _buffer(surface) == []
    assert _known(surface) == "json"


def test_a_subjects_export_holds_its_buffered_signals_until_they_are_promoted(
    surface: Surface,
) -> None:
    _tenant(surface)
    _say(surface, "e1", "Export that as CSV.", weak("csv"))
    _say(surface, "o1", "Otto wants it as CSV too.", weak("csv", subject="otto"))

    def exported(subject: str) -> list[BufferedSignal]:
        return surface.export_subject(subject).weak_signals

    # Each subject's export holds its own signals, as the buffer lists them.
    assert exported("mira") == _buffer(surface, subject="mira")
    assert [(s.episode_id, s.value) for s in exported("mira")] == [("e1", "csv")]
    assert [(s.episode_id, s.value) for s in exported("otto")] == [("o1", "csv")]
    _say(surface, "e2", "CSV again, please.", weak("csv"), occurred_at="2026-06-03T09:00:00Z")
    assert exported("mira") == []
    assert [s.episode_id for s in exported("otto")] == ["o1"]
