"""The lifecycle's rules on their own: approve once, activate only approved, roll back a stack."""

from __future__ import annotations

import pytest

from store.errors import Conflict
from store.memory.procedure_rules import (
    EMPTY,
    ScopeStack,
    VersionState,
    activation,
    check_approvable,
    rollback,
)

DRAFT = VersionState(name="triage", version=2, approved=False)
APPROVED = VersionState(name="triage", version=2, approved=True)


def test_a_draft_may_be_approved_and_an_approved_version_may_not_be_again() -> None:
    check_approvable(DRAFT)
    with pytest.raises(Conflict, match="already approved"):
        check_approvable(APPROVED)


def test_only_an_approved_version_is_activated_and_the_active_one_is_left_as_it_is() -> None:
    with pytest.raises(Conflict, match="not approved"):
        activation(DRAFT, EMPTY)
    assert activation(APPROVED, EMPTY) == "push"
    assert activation(APPROVED, ScopeStack(depth=1, active=1, rollback_target=None)) == "push"
    assert activation(APPROVED, ScopeStack(depth=2, active=2, rollback_target=1)) == "same"


def test_a_rollback_needs_an_active_version_with_a_target() -> None:
    assert rollback(ScopeStack(depth=3, active=3, rollback_target=1), name="t", scope="s") == 1
    with pytest.raises(Conflict, match="no version"):
        rollback(EMPTY, name="t", scope="s")
    with pytest.raises(Conflict, match="no earlier version"):
        rollback(ScopeStack(depth=1, active=1, rollback_target=None), name="t", scope="s")
