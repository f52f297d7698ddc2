"""Retention, the same on every surface: the default classes and declared ones, an undeclared
class refused naming its field, and a legal hold that refuses erasure until it is released."""

from __future__ import annotations

import pytest
from psycopg_pool import ConnectionPool

from tests.conformance.surfaces import Refused, Surface
from tests.http_helpers import tenant_rows

NOW = "2026-06-01T00:00:00Z"


def _defaults(standard_days: int = 365) -> list[tuple[str, int | None, str]]:
    return [
        ("ephemeral", 1, "recorded"),
        ("permanent", None, "recorded"),
        ("session", 1, "session_end"),
        ("standard", standard_days, "recorded"),
    ]


def test_the_default_classes_are_listed_and_declared_ones_join_or_override_them(
    surface: Surface,
) -> None:
    listed = surface.retention_classes()
    assert [(c.name, c.keep_days, c.counts_from) for c in listed] == _defaults()
    assert {(c.declared_at, c.updated_at) for c in listed} == {(None, None)}

    chat = surface.declare_retention_class("chat", {"keep_days": 7, "counts_from": "session_end"})
    assert chat.model_dump(mode="json") == {
        "name": "chat",
        "keep_days": 7,
        "counts_from": "session_end",
        "declared_at": NOW,
        "updated_at": NOW,
    }
    legal = surface.declare_retention_class("legal", {"keep_days": None})
    assert (legal.keep_days, legal.counts_from) == (None, "recorded")
    surface.declare_retention_class("standard", {"keep_days": 30})
    assert [(c.name, c.keep_days, c.counts_from) for c in surface.retention_classes()] == [
        ("chat", 7, "session_end"),
        *_defaults(standard_days=30)[:1],
        ("legal", None, "recorded"),
        *_defaults(standard_days=30)[1:],
    ]
    for name, declaration, field in (
        ("brief", {"keep_days": -1}, "keep_days"),
        ("chat", {"keep_days": 7, "x": 1}, "x"),
        ("a b", {"keep_days": 7}, "name"),
    ):
        with pytest.raises(Refused) as refused:
            surface.declare_retention_class(name, declaration)
        assert refused.value.fault == ("invalid", field)


def test_an_undeclared_class_is_refused_naming_the_field_and_writes_nothing(
    surface: Surface, pool: ConnectionPool
) -> None:
    before = tenant_rows(pool, surface.tenant)
    episode = {"id": "x1", "occurred_at": NOW, "text": "x"}
    undeclared = episode | {"retention_class": "forever"}
    refusals = []
    for refused_call in (
        lambda: surface.record(undeclared),
        lambda: surface.record_batch([episode, undeclared]),
        lambda: surface.declare_attribute(
            "city", {"value_type": "string", "retention_class": "forever"}
        ),
    ):
        with pytest.raises(Refused) as refused:
            refused_call()
        refusals.append(refused.value.fault)

    assert refusals == [
        ("invalid", "retention_class"),
        ("invalid", "episodes.1.retention_class"),
        ("invalid", "retention_class"),
    ]
    assert tenant_rows(pool, surface.tenant) == before
    with pytest.raises(Refused) as never_recorded:
        surface.episode("x1")
    assert never_recorded.value.code == "not_found"
    assert surface.attributes() == []
    # Declared, the class is taken.
    surface.declare_retention_class("forever", {"keep_days": None})
    surface.record(undeclared)
    assert surface.episode("x1").retention_class == "forever"


def test_a_held_subject_and_its_episodes_cannot_be_erased_until_released(
    surface: Surface, pool: ConnectionPool
) -> None:
    surface.record({"id": "h1", "occurred_at": NOW, "text": "About Hal.", "subjects": ["hal"]})
    held = surface.place_legal_hold("hal")
    assert held.model_dump(mode="json") == {"subject": "hal", "status": "held", "placed_at": NOW}
    assert surface.place_legal_hold("hal") == held  # placing it again changes nothing
    before = tenant_rows(pool, surface.tenant)

    with pytest.raises(Refused) as subject_refused:
        surface.erase_subject("hal")
    with pytest.raises(Refused) as episode_refused:
        surface.erase_episode("h1")

    assert subject_refused.value.fault == ("legal_hold", "subject")
    assert episode_refused.value.fault == ("legal_hold", "episode_id")
    assert tenant_rows(pool, surface.tenant) == before
    assert surface.episode("h1").text == "About Hal."
    released = surface.release_legal_hold("hal")
    assert released.model_dump(mode="json") == {
        "subject": "hal",
        "status": "released",
        "placed_at": NOW,
    }
    with pytest.raises(Refused) as not_held:
        surface.release_legal_hold("hal")
    assert not_held.value.code == "not_found"
    assert surface.erase_subject("hal").status == "erased"
