"""Expected replay results compared as behaviour: model scores within noise, the rest exact."""

from __future__ import annotations

from typing import Any

from server.replay.compare import differences, result_differences, same_printed_numbers

REASON = "Routed by similarity at or above 0.40, best first: passport_deadline (0.71)."


def context(*, score: float = 0.714991, reason: str = REASON, **fields: Any) -> dict[str, Any]:
    """A context result line shaped as the replay writes one."""
    return {
        "line": 18,
        "ok": True,
        "result": {
            "block": "Facts valid at 2026-06-04T00:00:00Z:\nmira.passport_deadline: 2026-06-30",
            "evidence": [
                {"episode_id": "e2", "score": 1.0, "superseded": False},
                {"episode_id": "e1", "score": score, "superseded": True},
            ],
            "plan": {
                "valid_at": "2026-06-04T00:00:00Z",
                "reasons": {"attributes": reason, "valid_at": "No date was given."},
            },
            "decision_id": "00000000-0000-0000-0000-000000000008",
            "tokens": 141,
            **fields,
        },
    }


def test_floats_within_the_tolerance_are_equal() -> None:
    assert differences(context(score=0.714992), context()) == []
    assert differences(context(score=0.714991 + 0.00009), context()) == []
    assert differences(context(score=0.714991 - 0.00009), context()) == []


def test_floats_beyond_the_tolerance_differ_at_their_path() -> None:
    assert differences(context(score=0.715102), context()) == [
        "$.result.evidence[1].score: got 0.715102, want 0.714991"
    ]


def test_integers_and_booleans_stay_exact() -> None:
    assert differences(context(tokens=142), context()) == ["$.result.tokens: got 142, want 141"]
    assert differences({"ok": 1}, {"ok": True}) == ["$.ok: got 1, want true"]
    assert differences({"score": 1}, {"score": 1.0}) == []


def test_a_printed_score_may_flip_at_its_rounding_boundary() -> None:
    # 0.7149995 prints 0.71 on one CPU and 0.7150004 prints 0.72 on another.
    flipped = REASON.replace("(0.71)", "(0.72)")
    assert differences(context(reason=flipped), context()) == []
    assert differences(context(), context(reason=flipped)) == []


def test_a_printed_score_two_units_away_differs() -> None:
    moved = REASON.replace("(0.71)", "(0.73)")
    assert differences(context(reason=moved), context()) == [
        f'$.result.plan.reasons.attributes: got "{moved}", want "{REASON}"'
    ]


def test_a_changed_word_in_a_reason_differs() -> None:
    reworded = REASON.replace("best first", "worst first")
    assert len(differences(context(reason=reworded), context())) == 1


def test_a_printed_number_keeps_its_places_and_integers_in_reasons_stay_exact() -> None:
    assert not same_printed_numbers("threshold 0.7", "threshold 0.71")
    assert not same_printed_numbers("(0.71, 0.52)", "(0.71)")
    assert not same_printed_numbers("June 3 is 2026-06-03", "June 3 is 2026-06-02")
    assert same_printed_numbers("at 0.95.", "at 0.94.")
    assert same_printed_numbers("between 0.40-0.51", "between 0.40-0.50")


def test_a_score_printed_outside_the_plan_reasons_stays_exact() -> None:
    block = "Facts (0.72)"
    assert differences({"block": block}, {"block": "Facts (0.71)"}) == [
        '$.block: got "Facts (0.72)", want "Facts (0.71)"'
    ]
    assert differences({"plan": {"valid_at": "0.72"}}, {"plan": {"valid_at": "0.71"}}) != []


def test_a_changed_id_differs() -> None:
    other = "00000000-0000-0000-0000-000000000009"
    assert differences(context(decision_id=other), context()) == [
        f'$.result.decision_id: got "{other}", want "00000000-0000-0000-0000-000000000008"'
    ]


def test_list_length_and_key_differences_are_reported() -> None:
    shorter = context()
    shorter["result"]["evidence"].pop()
    shorter["result"]["extra"] = None
    del shorter["result"]["tokens"]
    assert differences(shorter, context()) == [
        "$.result.evidence: 1 items, 2 expected",
        "$.result: no key 'tokens'",
        "$.result: unexpected key 'extra'",
    ]


def test_result_lines_are_numbered_and_their_count_is_checked() -> None:
    assert result_differences([context(), context(tokens=1)], [context(), context()]) == [
        "result 2: $.result.tokens: got 1, want 141"
    ]
    assert result_differences([context()], [context(), context()]) == ["1 results, 2 expected"]
    assert result_differences([context(score=0.714992)], [context()]) == []
