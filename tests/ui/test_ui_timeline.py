"""The timeline layout, a pure function: what each version is at a known-at time, and where it
is drawn (the axis to now, minimum widths, labels that stay inside the chart, retired beliefs
folded under their value, changes folded to the second). The versions are the seed trace's, as
the store holds them after its three writes."""

from __future__ import annotations

from datetime import datetime, timedelta
from uuid import UUID

from server.ui.timeline import AXIS, BAR, MARKS, MIN_WIDTH, ROW, WIDTH, Arrow, Timeline, lay_out
from server.ui.timeline_axis import MARGIN, by_second
from server.ui.timeline_labels import CHAR_PX, NARROW_PX, WIDE_PX, place_label
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
NOW = ts("2026-06-06T00:00:00Z")
"""The page's clock: after every write."""


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
    """Each bar as (attribute, value, state, superseded_by, open_ended), each retired belief
    folded under a bar right after it."""
    return [
        (key.attribute, each.value, each.state, each.superseded_by, each.open_ended)
        for key in timeline.keys
        for bar in key.bars
        for each in (bar, *bar.retired)
    ]


def test_now_the_correction_is_current_and_its_retired_belief_is_folded_under_it() -> None:
    timeline = lay_out(SEED, [], known_at=NOW, now=NOW)
    assert rows(timeline) == [
        ("passport_deadline", "2026-08-01", "past", None, False),
        ("passport_deadline", "2026-07-15", "superseded", "2026-06-30", False),
        ("passport_deadline", "2026-07-15", "retired", "2026-06-30", True),
        ("passport_deadline", "2026-06-30", "current", None, True),
    ]
    [key] = timeline.keys
    # The retired open-ended 2026-07-15 is not a row of its own: it is folded under its fact.
    assert [bar.version.version_id for bar in key.bars[1].retired] == [UUID(int=2)]
    assert key.retired == ()
    assert key.believed == "2026-06-30"
    assert key.height == MARKS + 3 * ROW + AXIS
    assert key.rows_end == MARKS + 3 * ROW
    assert timeline.unrecorded == 0
    assert timeline.first_recorded == E1_AT
    assert timeline.changes == (E1_AT, E2_AT, E0_AT)
    superseded, current = key.bars[1], key.bars[2]
    # From the end of e1's closed window to the start of e2's fact, row to row.
    assert key.arrows == (
        Arrow(
            x1=superseded.x + superseded.width, y1=superseded.y + BAR, x2=current.x, y2=current.y
        ),
    )
    assert superseded.x + superseded.width == current.x
    assert [bar.words for bar in key.bars] == ["past", "superseded", "current"]


def test_before_the_correction_the_first_value_was_current_then_and_later_writes_are_left_out() -> (
    None
):
    timeline = lay_out(SEED, [], known_at=ts("2026-06-02T00:00:00Z"), now=NOW)
    assert rows(timeline) == [("passport_deadline", "2026-07-15", "current", None, True)]
    [key] = timeline.keys
    assert (key.believed, key.arrows, timeline.unrecorded) == ("2026-07-15", (), 3)
    assert key.bars[0].words == "current then"


def test_after_the_correction_but_before_the_late_episode_may_is_not_known() -> None:
    timeline = lay_out(SEED, [], known_at=ts("2026-06-04T00:00:00Z"), now=NOW)
    assert rows(timeline) == [
        ("passport_deadline", "2026-07-15", "superseded", "2026-06-30", False),
        ("passport_deadline", "2026-07-15", "retired", "2026-06-30", True),
        ("passport_deadline", "2026-06-30", "current", None, True),
    ]
    assert timeline.unrecorded == 1


def test_before_anything_was_recorded_nothing_is_drawn_and_the_first_record_is_named() -> None:
    timeline = lay_out(SEED, [], known_at=ts("2026-05-01T00:00:00Z"), now=NOW)
    assert (timeline.keys, timeline.unrecorded, timeline.first_recorded) == ((), 4, E1_AT)
    assert lay_out([], [], known_at=NOW, now=NOW).first_recorded is None


def test_the_axis_runs_from_the_first_value_to_now_with_a_marker_at_now_and_at_known_at() -> None:
    known_at, now = ts("2026-06-03T12:00:00Z"), ts("2026-12-01T00:00:00Z")
    timeline = lay_out(SEED, [], known_at=known_at, now=now)
    span = now - ts("2026-06-01T09:00:00Z")  # e1's value is the first known then
    assert timeline.start == ts("2026-06-01T09:00:00Z") - span * MARGIN
    assert timeline.end == now + span * MARGIN
    assert [(m.name, m.x) for m in timeline.markers] == [
        (
            "known at",
            round((known_at - timeline.start) / (timeline.end - timeline.start) * WIDTH, 1),
        ),
        ("now", round((1 - MARGIN / (1 + 2 * MARGIN)) * WIDTH, 1)),
    ]
    # Known at now: one marker.
    assert [m.name for m in lay_out(SEED, [], known_at=now, now=now).markers] == ["now"]
    bars = [bar for key in timeline.keys for bar in key.bars]
    assert all(bar.x >= 0 and bar.x + bar.width <= WIDTH for bar in bars)
    assert [bar.open_ended for bar in bars] == [False, True]
    assert bars[1].x + bars[1].width == WIDTH  # open-ended: to the right edge
    assert [bar.y for bar in bars] == [MARKS + (ROW - BAR) / 2 + n * ROW for n in range(2)]
    assert [tick.x for tick in timeline.ticks] == [0.0, 240.0, 480.0, 720.0, 960.0]
    assert [tick.narrow for tick in timeline.ticks] == [True, False, True, False, True]
    assert [tick.anchor for tick in timeline.ticks] == [
        "start",
        "middle",
        "middle",
        "middle",
        "end",
    ]
    assert timeline.ticks[0].label == timeline.start.strftime("%Y-%m-%d")


def test_a_short_value_keeps_a_minimum_width_and_its_label_goes_outside() -> None:
    hour = version(30, UUID(int=30), "2026-07-01", ("2026-06-02T00:00:00Z", "2026-06-02T01:00:00Z"),
                   (E1_AT, None), source="e1", attribute="visit")  # fmt: skip
    late = version(31, UUID(int=31), "2027-01-01", ("2026-12-31T23:00:00Z", "2027-01-01T00:00:00Z"),
                   (E1_AT, None), source="e1", attribute="visit")  # fmt: skip
    now = ts("2027-01-01T00:00:00Z")
    timeline = lay_out([hour, late], [], known_at=now, now=now)
    short, last = timeline.keys[0].bars
    assert short.width == last.width == MIN_WIDTH
    assert last.x + last.width <= WIDTH  # pulled in from the right edge
    assert (short.wide.place, short.wide.anchor) == ("after", "start")
    assert short.wide.x > short.x + short.width
    assert (last.wide.place, last.wide.anchor) == ("before", "end")
    assert last.wide.x < last.x
    assert short.wide.text == short.narrow.text == "2026-07-01 · past"


def test_a_label_fits_inside_else_beside_else_shortened_and_never_past_an_edge() -> None:
    text = "2026-07-15 · superseded"  # 23 characters
    need = len(text) * CHAR_PX * WIDTH / WIDE_PX
    inside = place_label(text, x=100.0, width=need + 20, chart_px=WIDE_PX)
    assert (inside.place, inside.anchor, inside.text) == ("inside", "start", text)
    assert inside.x > 100.0
    after = place_label(text, x=100.0, width=10.0, chart_px=WIDE_PX)
    assert (after.place, after.anchor, after.text) == ("after", "start", text)
    before = place_label(text, x=WIDTH - 20.0, width=20.0, chart_px=WIDE_PX)
    assert (before.place, before.anchor, before.text) == ("before", "end", text)
    long = "a value far too long for either side of a phone's chart, however it is placed"
    cut = place_label(long, x=WIDTH / 2, width=10.0, chart_px=NARROW_PX)
    assert cut.text.endswith("…")
    assert long.startswith(cut.text[:-1])
    for chart_px in (WIDE_PX, NARROW_PX):
        for x in range(0, int(WIDTH), 40):
            for label in (text, long):
                placed = place_label(label, x=float(x), width=5.0, chart_px=chart_px)
                size = len(placed.text) * CHAR_PX * WIDTH / chart_px
                left = placed.x - (size if placed.anchor == "end" else 0.0)
                assert left >= 0.0, (chart_px, x, placed)
                assert left + size <= WIDTH, (chart_px, x, placed)


def test_changes_within_one_second_fold_into_the_last_of_them() -> None:
    second = ts("2026-06-01T09:00:05Z")
    instants = [second + timedelta(microseconds=n) for n in (900_000, 10, 500_000)]
    assert by_second([*instants, E2_AT, second]) == (
        second + timedelta(microseconds=900_000),
        E2_AT,
    )
    retire = SEED[1].model_copy(update={"retired_at": E2_AT + timedelta(microseconds=300)})
    record = SEED[2].model_copy(update={"recorded_at": E2_AT + timedelta(microseconds=300)})
    timeline = lay_out([SEED[0], retire, record, SEED[3]], [], known_at=NOW, now=NOW)
    assert timeline.changes == (E1_AT, E2_AT + timedelta(microseconds=300), E0_AT)


def test_a_fact_retired_whole_is_folded_under_its_key() -> None:
    gone = version(40, UUID(int=40), "Oslo", ("2026-06-01T00:00:00Z", None), (E1_AT, E2_AT),
                   source="e1", attribute="city")  # fmt: skip
    [_, city] = lay_out([*SEED, gone], [], known_at=NOW, now=NOW).keys
    assert (city.attribute, city.bars, city.believed) == ("city", (), None)
    assert [(bar.value, bar.state) for bar in city.retired] == [("Oslo", "retired")]


def test_a_version_recorded_and_retired_at_one_instant_is_never_drawn() -> None:
    ghost = version(9, UUID(int=99), "never", ("2026-06-01T00:00:00Z", None), (E2_AT, E2_AT),
                    source="e9")  # fmt: skip
    timeline = lay_out([*SEED, ghost], [], known_at=E2_AT, now=NOW)
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
        at: [bar.challenges for key in lay_out(SEED, conflicts, known_at=ts(at), now=NOW).keys
             for bar in key.bars]
        for at in ("2026-06-03T12:00:00Z", "2026-06-04T12:00:00Z", "2026-06-06T00:00:00Z")
    }  # fmt: skip
    challenge = Challenge(
        value="2026-06-29", source_episode_id="e3", disputed=True, evidence_verified=False
    )
    assert marked == {
        "2026-06-03T12:00:00Z": [(), ()],
        "2026-06-04T12:00:00Z": [(), (challenge,)],
        "2026-06-06T00:00:00Z": [(), (), ()],
    }
    changes = lay_out(SEED, conflicts, known_at=settled, now=NOW).changes
    assert changes == (E1_AT, E2_AT, opened, settled, E0_AT)


def test_keys_are_laid_out_in_the_order_given_on_one_axis_and_values_shown_as_text() -> None:
    city = version(20, UUID(int=20), "<b>Oslo</b>", ("2026-06-02T00:00:00Z", None), (E1_AT, None),
                   source="e1", attribute="city")  # fmt: skip
    count = version(21, UUID(int=21), "x", ("2026-06-02T00:00:00Z", None), (E1_AT, None),
                    source="e1", attribute="visits")  # fmt: skip
    count = count.model_copy(update={"value": 3})
    timeline = lay_out([*SEED, city, count], [], known_at=NOW, now=NOW)
    assert [key.attribute for key in timeline.keys] == ["passport_deadline", "city", "visits"]
    assert [key.believed for key in timeline.keys] == ["2026-06-30", "<b>Oslo</b>", "3"]
    # June 2 lies between e1's start (June 1) and e2's (June 3) on the shared axis.
    deadline, city_bar = timeline.keys[0].bars, timeline.keys[1].bars[0]
    assert deadline[1].x < city_bar.x < deadline[2].x
