"""The timeline layout, a pure function: what each version is at a known-at time, and where it
is drawn. The versions are the seed trace's, as the store holds them after its three writes."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from server.ui.timeline import BAR, ROW, WIDTH, Arrow, Timeline, lay_out
from server.ui.timeline_states import Challenge
from store.contract.facts import Challenger, ConflictRecord, Fact
from tests.conftest import ts
from tests.helpers import fact

E1_AT, E2_AT, E0_AT = (
    ts("2026-06-01T09:00:05Z"),
    ts("2026-06-03T10:00:05Z"),
    ts("2026-06-05T12:00:00Z"),
)
"""When e1's, e2's and the late e0's writes were recorded."""
FACT_0, FACT_1, FACT_2 = UUID(int=10), UUID(int=11), UUID(int=12)


def version(
    number: int,
    fact_id: UUID,
    value: str,
    valid: tuple[str, str | None],
    believed: tuple[datetime, datetime | None],
    *,
    source: str,
    supersedes: UUID | None = None,
    attribute: str = "passport_deadline",
) -> Fact:
    """A stored version with the windows given."""
    stored = fact(
        value,
        source=source,
        valid_from=ts(valid[0]),
        valid_to=ts(valid[1]) if valid[1] else None,
        attribute=attribute,
    )
    return stored.model_copy(
        update={
            "fact_id": fact_id,
            "version_id": UUID(int=number),
            "recorded_at": believed[0],
            "retired_at": believed[1],
            "supersedes": supersedes,
        }
    )


SEED = [
    version(1, FACT_0, "2026-08-01", ("2026-05-30T08:00:00Z", "2026-06-01T09:00:00Z"),
            (E0_AT, None), source="e0"),
    version(2, FACT_1, "2026-07-15", ("2026-06-01T09:00:00Z", None), (E1_AT, E2_AT), source="e1"),
    version(3, FACT_1, "2026-07-15", ("2026-06-01T09:00:00Z", "2026-06-03T10:00:00Z"),
            (E2_AT, None), source="e1"),
    version(4, FACT_2, "2026-06-30", ("2026-06-03T10:00:00Z", None), (E2_AT, None), source="e2",
            supersedes=FACT_1),
]  # fmt: skip
"""History order: by valid_from, then recorded_at."""


def rows(timeline: Timeline) -> list[tuple[str, str, str, str | None, bool]]:
    """Each bar as (attribute, value, state, superseded_by, open_ended)."""
    return [
        (key.attribute, bar.value, bar.state, bar.superseded_by, bar.open_ended)
        for key in timeline.keys
        for bar in key.bars
    ]


def test_now_the_correction_is_current_and_the_first_value_superseded() -> None:
    timeline = lay_out(SEED, [], known_at=ts("2026-06-06T00:00:00Z"))
    assert rows(timeline) == [
        ("passport_deadline", "2026-08-01", "past", None, False),
        ("passport_deadline", "2026-07-15", "retired", "2026-06-30", True),
        ("passport_deadline", "2026-07-15", "superseded", "2026-06-30", False),
        ("passport_deadline", "2026-06-30", "current", None, True),
    ]
    [key] = timeline.keys
    assert key.believed == "2026-06-30"
    assert key.height == 4 * ROW
    assert timeline.unrecorded == 0
    assert timeline.changes == (E1_AT, E2_AT, E0_AT)
    superseded, current = key.bars[2], key.bars[3]
    # From the end of e1's closed window to the start of e2's fact, row to row.
    assert key.arrows == (
        Arrow(
            x1=superseded.x + superseded.width, y1=superseded.y + BAR, x2=current.x, y2=current.y
        ),
    )
    assert superseded.x + superseded.width == current.x


def test_before_the_correction_the_first_value_was_current_and_later_writes_are_left_out() -> None:
    timeline = lay_out(SEED, [], known_at=ts("2026-06-02T00:00:00Z"))
    assert rows(timeline) == [("passport_deadline", "2026-07-15", "current", None, True)]
    [key] = timeline.keys
    assert (key.believed, key.arrows, timeline.unrecorded) == ("2026-07-15", (), 3)


def test_after_the_correction_but_before_the_late_episode_may_is_not_known() -> None:
    timeline = lay_out(SEED, [], known_at=ts("2026-06-04T00:00:00Z"))
    assert rows(timeline) == [
        ("passport_deadline", "2026-07-15", "retired", "2026-06-30", True),
        ("passport_deadline", "2026-07-15", "superseded", "2026-06-30", False),
        ("passport_deadline", "2026-06-30", "current", None, True),
    ]
    assert timeline.unrecorded == 1


def test_before_anything_was_recorded_nothing_is_drawn() -> None:
    timeline = lay_out(SEED, [], known_at=ts("2026-05-01T00:00:00Z"))
    assert (timeline.keys, timeline.unrecorded, timeline.marker_x) == ((), 4, WIDTH / 2)


def test_bars_lie_on_one_axis_with_a_margin_and_open_ends_reach_the_edge() -> None:
    known_at = ts("2026-06-06T00:00:00Z")
    timeline = lay_out(SEED, [], known_at=known_at)
    assert timeline.start < ts("2026-05-30T08:00:00Z")
    assert timeline.end > ts("2026-06-03T10:00:00Z")
    bars = [bar for key in timeline.keys for bar in key.bars]
    assert all(bar.x >= 0 and bar.x + bar.width <= WIDTH for bar in bars)
    assert [bar.x + bar.width == WIDTH for bar in bars] == [False, True, False, True]
    assert [bar.y for bar in bars] == [(ROW - BAR) / 2 + n * ROW for n in range(4)]
    assert [tick.x for tick in timeline.ticks] == [0.0, 192.0, 384.0, 576.0, 768.0, 960.0]
    assert timeline.ticks[0].label == timeline.start.strftime("%Y-%m-%d")
    assert timeline.marker_x is None  # June 6 lies past the last start and end drawn
    inside = lay_out(SEED, [], known_at=ts("2026-06-03T12:00:00Z"))
    assert inside.marker_x is not None
    assert inside.marker_x == round(
        (inside.known_at - inside.start) / (inside.end - inside.start) * WIDTH, 1
    )


def test_a_version_recorded_and_retired_at_one_instant_is_never_drawn() -> None:
    ghost = version(9, UUID(int=99), "never", ("2026-06-01T00:00:00Z", None), (E2_AT, E2_AT),
                    source="e9")  # fmt: skip
    timeline = lay_out([*SEED, ghost], [], known_at=E2_AT)
    assert "never" not in [bar.value for key in timeline.keys for bar in key.bars]
    assert timeline.unrecorded == 1  # e0's, recorded later; the ghost is not counted


def _conflict(*, created: datetime, resolved: datetime | None, disputed: bool) -> ConflictRecord:
    return ConflictRecord(
        conflict_id=UUID(int=50),
        subject="mira",
        attribute="passport_deadline",
        valid_from=ts("2026-06-03T10:00:00Z"),
        policy="source_precedence",
        disputed=disputed,
        incumbent_fact_id=FACT_2,
        challenger=Challenger(
            conflict_id=UUID(int=50),
            value="2026-06-29",
            source_episode_id="e3",
            source_kind="message",
            evidence=None,
            evidence_verified=False,
        ),
        status="open" if resolved is None else "resolved",
        created_at=created,
        resolved_at=resolved,
        resolution=None if resolved is None else "incumbent",
        resolved_fact_id=None if resolved is None else FACT_2,
    )


def test_a_dispute_open_at_known_at_marks_the_incumbent_with_its_challenger() -> None:
    opened, settled = ts("2026-06-04T00:00:00Z"), ts("2026-06-05T00:00:00Z")
    conflicts = [_conflict(created=opened, resolved=settled, disputed=True)]
    marked = {
        at: [bar.challenges for key in lay_out(SEED, conflicts, known_at=ts(at)).keys
             for bar in key.bars]
        for at in ("2026-06-03T12:00:00Z", "2026-06-04T12:00:00Z", "2026-06-06T00:00:00Z")
    }  # fmt: skip
    challenge = Challenge(
        value="2026-06-29", source_episode_id="e3", disputed=True, evidence_verified=False
    )
    assert marked == {
        "2026-06-03T12:00:00Z": [(), (), ()],
        "2026-06-04T12:00:00Z": [(), (), (challenge,)],
        "2026-06-06T00:00:00Z": [(), (), (), ()],
    }
    changes = lay_out(SEED, conflicts, known_at=settled).changes
    assert changes == (E1_AT, E2_AT, opened, settled, E0_AT)


def test_keys_are_laid_out_in_the_order_given_on_one_axis_and_values_shown_as_text() -> None:
    city = version(20, UUID(int=20), "<b>Oslo</b>", ("2026-06-02T00:00:00Z", None), (E1_AT, None),
                   source="e1", attribute="city")  # fmt: skip
    count = version(21, UUID(int=21), "x", ("2026-06-02T00:00:00Z", None), (E1_AT, None),
                    source="e1", attribute="visits")  # fmt: skip
    count = count.model_copy(update={"value": 3})
    timeline = lay_out([*SEED, city, count], [], known_at=ts("2026-06-06T00:00:00Z"))
    assert [key.attribute for key in timeline.keys] == ["passport_deadline", "city", "visits"]
    assert [key.believed for key in timeline.keys] == ["2026-06-30", "<b>Oslo</b>", "3"]
    # June 2 lies between e1's start (June 1) and e2's (June 3) on the shared axis.
    deadline, city_bar = timeline.keys[0].bars, timeline.keys[1].bars[0]
    assert deadline[1].x < city_bar.x < deadline[3].x
