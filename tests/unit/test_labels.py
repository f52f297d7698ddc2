"""One rule names every version and challenger (``store.contract.labels``): the whole table of
inputs, each combination's exact label, and the rules the issue states as properties over that
table."""

from __future__ import annotations

import itertools
from typing import get_args

import pytest

from store.contract.labels import (
    DISPUTED,
    IN_CONFLICT,
    REJECTED,
    SUPERSEDED,
    UNVERIFIED,
    ConflictState,
    Label,
    ReadStatus,
    Role,
    version_label,
)

STATUSES: tuple[ReadStatus, ...] = get_args(ReadStatus)
ROLES: tuple[Role, ...] = get_args(Role)
CONFLICTS: tuple[ConflictState | None, ...] = (*get_args(ConflictState), None)
FLAGS = (False, True)

Inputs = tuple[ReadStatus, bool, Role, ConflictState | None, bool, bool]
"""(status, disputed, role, conflict, superseded, evidence_verified)."""

EVERY: list[Inputs] = list(itertools.product(STATUSES, FLAGS, ROLES, CONFLICTS, FLAGS, FLAGS))

VERSION_STATE = {
    # (status, superseded) -> the state word of a stored version
    ("current", False): "current",
    ("current", True): "current",
    ("past", False): "past",
    ("past", True): "superseded",
    ("future", False): "future",
    ("future", True): "future",
    ("retired", False): "retired",
    ("retired", True): "retired",
}
CHALLENGER_STATE = {
    # (conflict, disputed) -> the state word of a challenger that did not win
    ("open", True): "disputed",
    ("open", False): "in conflict",
    ("lost", True): "rejected",
    ("lost", False): "rejected",
}


def expected(inputs: Inputs) -> str | None:
    """The label's words by the table above; None where the inputs name no label."""
    status, disputed, role, conflict, superseded, verified = inputs
    unverified = [] if verified else ["unverified"]
    if role == "challenger" and conflict is None:
        return None
    if role == "challenger" and conflict != "won":
        return " · ".join([CHALLENGER_STATE[conflict, disputed], *unverified])  # type: ignore[index]
    believed_dispute = ["disputed"] if disputed and status != "retired" else []
    return " · ".join([VERSION_STATE[status, superseded], *believed_dispute, *unverified])


def label(inputs: Inputs) -> Label:
    status, disputed, role, conflict, superseded, verified = inputs
    return version_label(
        status=status,
        disputed=disputed,
        role=role,
        conflict=conflict,
        superseded=superseded,
        evidence_verified=verified,
    )


def test_the_table_covers_every_combination_of_inputs() -> None:
    assert len(EVERY) == 4 * 2 * 2 * 4 * 2 * 2 == len(set(EVERY))


@pytest.mark.parametrize("inputs", EVERY, ids=lambda inputs: "-".join(map(str, inputs)))
def test_each_combination_has_its_exact_label(inputs: Inputs) -> None:
    words = expected(inputs)
    if words is None:
        with pytest.raises(ValueError, match="conflict state"):
            label(inputs)
        return
    found = label(inputs)
    assert found.words == words
    assert found.words.split(" · ") == [found.state, *found.marks]


def _labelled() -> list[tuple[Inputs, Label]]:
    return [(inputs, label(inputs)) for inputs in EVERY if expected(inputs) is not None]


def test_the_issue_examples_read_as_the_issue_asks() -> None:
    unverified_current = version_label(status="current", disputed=False, evidence_verified=False)
    refused = version_label(status="current", disputed=False, role="challenger", conflict="open")
    incumbent = version_label(status="current", disputed=False, conflict="open")
    assert (unverified_current.words, refused.words, incumbent.words) == (
        "current · unverified",
        "in conflict",
        "current",
    )
    assert (unverified_current.unverified, refused.in_conflict, incumbent.disputed) == (
        True,
        True,
        False,
    )


def test_a_challenger_that_did_not_win_is_never_superseded() -> None:
    for (_, _, role, conflict, _, _), found in _labelled():
        if role == "challenger" and conflict != "won":
            assert SUPERSEDED not in found.words
            assert not found.superseded


def test_disputed_only_when_the_key_is_disputed() -> None:
    for (_, disputed, _, _, _, _), found in _labelled():
        if not disputed:
            assert DISPUTED not in found.words.split(" · ")
            assert not found.disputed
        assert found.disputed == (DISPUTED in found.words.split(" · "))


def test_in_conflict_only_when_refused_and_its_conflict_open() -> None:
    for (_, disputed, role, conflict, _, _), found in _labelled():
        refused_and_open = role == "challenger" and conflict == "open" and not disputed
        assert found.in_conflict == refused_and_open
        assert (IN_CONFLICT in found.words) == refused_and_open


def test_unverified_always_shows_and_only_for_unverified_evidence() -> None:
    for (*_, verified), found in _labelled():
        assert found.unverified == (not verified)
        assert found.words.endswith(f" · {UNVERIFIED}") == (not verified)


def test_an_incumbent_is_named_the_same_whatever_challenges_it() -> None:
    for status, disputed, superseded, verified in itertools.product(STATUSES, FLAGS, FLAGS, FLAGS):
        names = {
            label((status, disputed, "incumbent", conflict, superseded, verified))
            for conflict in CONFLICTS
        }
        assert len(names) == 1


def test_a_challenger_that_won_is_named_as_the_version_it_became() -> None:
    for status, disputed, superseded, verified in itertools.product(STATUSES, FLAGS, FLAGS, FLAGS):
        won = label((status, disputed, "challenger", "won", superseded, verified))
        assert won == label((status, disputed, "incumbent", None, superseded, verified))
    lost = version_label(status="current", disputed=True, role="challenger", conflict="lost")
    assert lost.words == REJECTED
