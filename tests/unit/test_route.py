"""Routing among the subject's own keys (read path step 3), pure."""

from __future__ import annotations

import pytest

from retrieval.routing.route import ROUTING_THRESHOLD, AttributeScore, route_keys


def scores(**values: float) -> list[AttributeScore]:
    return [AttributeScore(name, score) for name, score in values.items()]


def test_only_held_keys_are_candidates_however_well_others_score() -> None:
    routing = route_keys(
        scores(president_of_the_united_states=0.68, president_of_south_korea=0.55),
        held=["president_of_south_korea"],
        subject="south_korea",
    )

    assert (routing.attributes, routing.routed) == (("president_of_south_korea",), True)
    assert "president_of_south_korea (0.55)" in routing.reason
    assert "president_of_the_united_states" not in routing.reason


def test_held_keys_at_or_above_the_threshold_are_routed_best_first_at_most_three() -> None:
    routing = route_keys(
        scores(a=0.66, b=0.7, c=0.61, d=0.65, e=0.2),
        held=["a", "b", "c", "d", "e"],
        subject="s",
    )

    assert routing.attributes == ("b", "a", "d")
    assert "1 more passed; at most 3" in routing.reason


def test_only_held_keys_at_or_above_a_given_threshold_are_routed() -> None:
    # employer is within the runner-up margin of the best: only the threshold leaves it out.
    routing = route_keys(
        scores(home_city=0.55, shipping_address=0.52, employer=0.48, birthday=0.2),
        held=["home_city", "shipping_address", "employer", "birthday"],
        subject="s",
        threshold=0.5,
    )

    assert (routing.attributes, routing.routed) == (("home_city", "shipping_address"), True)
    assert "Chosen at or above 0.50: home_city, shipping_address." in routing.reason


def test_a_score_equal_to_the_threshold_passes_and_duplicates_keep_their_best() -> None:
    routing = route_keys(
        [AttributeScore("birthday", 0.1), AttributeScore("birthday", 0.5)],
        held=["birthday", "employer"],
        subject="s",
        threshold=0.5,
    )

    assert (routing.attributes, routing.routed) == (("birthday",), True)
    assert "birthday (0.50)" in routing.reason


@pytest.mark.parametrize("best", [ROUTING_THRESHOLD - 0.01, 0.0])
def test_nothing_at_the_default_threshold_routes_nothing(best: float) -> None:
    routing = route_keys(scores(birthday=best), held=["birthday", "employer"], subject="s")

    assert (routing.attributes, routing.routed) == ((), False)
    assert f"None reaches {ROUTING_THRESHOLD:.2f}" in routing.reason
    assert "evidence is unverified" in routing.reason


def test_runners_up_far_below_the_best_are_not_routed() -> None:
    routing = route_keys(scores(a=0.5, b=0.7, c=0.41), held=["a", "b", "c"], subject="s")

    assert routing.attributes == ("b",)
    assert "2 more passed but scored over 0.10 below the best" in routing.reason


def test_a_single_held_key_is_read_below_the_threshold() -> None:
    routing = route_keys(
        scores(ceo_of_acme=0.25, birthday=0.3), held=["ceo_of_acme"], subject="acme"
    )

    assert (routing.attributes, routing.routed) == (("ceo_of_acme",), True)
    assert "not clearly about another attribute" in routing.reason


def test_a_single_held_key_is_not_read_when_the_question_is_clearly_about_another() -> None:
    routing = route_keys(scores(ceo_of_acme=0.25, email=0.62), held=["ceo_of_acme"], subject="acme")

    assert (routing.attributes, routing.routed) == ((), False)
    assert "about email (0.62)" in routing.reason


def test_several_held_keys_none_similar_route_nothing() -> None:
    routing = route_keys(scores(a=0.1, b=0.2), held=["a", "b"], subject="s")

    assert (routing.attributes, routing.routed) == ((), False)
    assert "unverified" in routing.reason


def test_a_subject_holding_nothing_routes_nothing() -> None:
    routing = route_keys(scores(a=0.9), held=[], subject="ghost")

    assert (routing.attributes, routing.routed) == ((), False)
    assert "holds no key" in routing.reason


def test_a_held_key_missing_from_the_scores_counts_as_zero() -> None:
    routing = route_keys([], held=["a", "b"], subject="s")

    assert routing.attributes == ()
    assert "a (0.00)" in routing.reason


def test_max_keys_is_checked() -> None:
    with pytest.raises(ValueError, match="max_keys"):
        route_keys([], held=["a"], subject="s", max_keys=0)
