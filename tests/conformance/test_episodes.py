"""Recording episodes, the same on every surface: idempotent by id, another content under the
same id refused, a bad episode refused naming its field, and a batch recorded all or nothing."""

from __future__ import annotations

import pytest

from tests.conformance.surfaces import Json, Refused, Surface

E1 = {"id": "e1", "occurred_at": "2026-06-01T09:00:00Z", "text": "hello", "subjects": ["mira"]}


def _refused(surface: Surface, *episodes: Json) -> tuple[str, str | None]:
    """The fault of recording one episode, or of recording several as one batch."""
    if len(episodes) == 1:
        with pytest.raises(Refused) as refused:
            surface.record(episodes[0])
    else:
        with pytest.raises(Refused) as refused:
            surface.record_batch(list(episodes))
    return refused.value.fault


def _recorded(surface: Surface, episode_id: str) -> bool:
    try:
        surface.episode(episode_id)
    except Refused as refused:
        if refused.code != "not_found":
            raise
        return False
    return True


def test_episodes_are_idempotent_by_id_and_refuse_other_content(surface: Surface) -> None:
    surface.record(E1)
    first = surface.episode("e1")
    # The same instant in another offset is the same episode.
    surface.record(E1 | {"occurred_at": "2026-06-01T11:00:00+02:00"})
    assert surface.episode("e1") == first
    assert _refused(surface, E1 | {"text": "goodbye"}) == ("conflict", "id")
    assert surface.episode("e1") == first


@pytest.mark.parametrize(
    ("episode", "field"),
    [
        ({"occurred_at": "2026-06-01T09:00:00"}, "occurred_at"),
        ({"text": ""}, "text"),
        ({"kind": "rumour"}, "kind"),
        ({"id": "has space"}, "id"),
        ({"subjects": ["ok", "not ok"]}, "subjects.1"),
        ({"tenant_id": "other"}, "tenant_id"),
    ],
)
def test_a_bad_episode_is_refused_naming_its_field(
    surface: Surface, episode: Json, field: str
) -> None:
    base = {"id": "e9", "occurred_at": "2026-06-01T09:00:00Z", "text": "hello"}
    assert _refused(surface, base | episode) == ("invalid", field)
    assert not _recorded(surface, "e9")


def test_a_batch_with_one_bad_episode_records_none_of_them(surface: Surface) -> None:
    good = {"id": "good", "occurred_at": "2026-04-01T08:00:00Z", "text": "Fine."}
    naive = {"id": "bad", "occurred_at": "2026-04-01T08:00:00", "text": "A naive time."}
    assert _refused(surface, good, naive) == ("invalid", "episodes.1.occurred_at")
    assert (_recorded(surface, "good"), _recorded(surface, "bad")) == (False, False)


def test_a_batch_reusing_an_id_with_other_content_records_none_of_them(surface: Surface) -> None:
    kept = {"id": "kept", "occurred_at": "2026-04-01T08:00:00Z", "text": "Original."}
    surface.record(kept)
    fresh = {"id": "fresh", "occurred_at": "2026-04-01T09:00:00Z", "text": "New."}
    assert _refused(surface, fresh, kept | {"text": "Rewritten."})[0] == "conflict"
    assert not _recorded(surface, "fresh")
    assert surface.episode("kept").text == "Original."
