"""The lifecycle of a procedure version, as pure decisions: draft → approved → active in a scope.

A version is approved once and stays approved. Only an approved version may be activated. A
scope's activations form a stack (``ScopeStack``): activating another version pushes it, so the
version it displaces becomes its rollback target; a rollback pops the top, so the target is
active again and its own rollback target is the next one back. Activating the version already
active changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from store.errors import Conflict


@dataclass(frozen=True, slots=True)
class VersionState:
    """What the rules need of one stored version."""

    name: str
    version: int
    approved: bool


@dataclass(frozen=True, slots=True)
class ScopeStack:
    """The top of a scope's activation stack: the active version and the one below it."""

    depth: int
    """How many activations are stacked; 0 when nothing is active."""
    active: int | None
    rollback_target: int | None


EMPTY = ScopeStack(depth=0, active=None, rollback_target=None)


def check_approvable(state: VersionState) -> None:
    """Refuse to approve a version twice: an approval is a record, never overwritten."""
    if state.approved:
        raise Conflict(f"version {state.version} of procedure {state.name} is already approved")


def activation(state: VersionState, stack: ScopeStack) -> Literal["push", "same"]:
    """Whether activating ``state`` pushes it on ``stack``, or it is already the active one."""
    if not state.approved:
        raise Conflict(
            f"version {state.version} of procedure {state.name} is not approved;"
            " approve it before activating it"
        )
    return "same" if stack.active == state.version else "push"


def rollback(stack: ScopeStack, *, name: str, scope: str) -> int:
    """The version a rollback in ``scope`` makes active again: the active one's target."""
    if stack.active is None:
        raise Conflict(f"no version of procedure {name} is active in scope {scope}")
    if stack.rollback_target is None:
        raise Conflict(
            f"version {stack.active} of procedure {name} is the first active in scope {scope};"
            " there is no earlier version to roll back to"
        )
    return stack.rollback_target
