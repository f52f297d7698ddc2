"""What a version is called, in one place: the API's ``label``, the block's marks, the page's bars.

Pure. A label is a state word and the marks after it, joined by `` · ``: ``current``,
``current · disputed``, ``past · unverified``, ``in conflict``. The rules:

1. A stored version (``incumbent``) is named by its read status: ``current``, ``past``,
   ``future`` or ``retired``; a past version that a later fact replaced is ``superseded``.
   It is marked ``disputed`` while believed (not retired) when its key is disputed.
2. A challenger (a value that met the version at the same start and waits in the conflicts
   table) is named by what happened to it: while its conflict is open, ``disputed`` if it
   disputes the key (a source of equal rank), else ``in conflict`` (refused, e.g. under
   ``reject``); once resolved against it, ``rejected``. Resolved for it, it became a stored
   version and is named as one (rule 1). A challenger that did not win is never ``superseded``.
3. Whatever else holds, a version or challenger whose evidence was not found in its episode
   is marked ``unverified``.

The mark words are defined here, beside the read statuses; ``retrieval.context.marks`` (which
``evals.leakage.scoring`` reads too) adds the marks only evidence lines carry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SUPERSEDED = "superseded"
IN_CONFLICT = "in conflict"
DISPUTED = "disputed"
UNVERIFIED = "unverified"

ReadStatus = Literal["current", "past", "future", "retired"]
Role = Literal["incumbent", "challenger"]
ConflictState = Literal["open", "won", "lost"]
"""A challenger's conflict: open, resolved for it (``won``), resolved against it (``lost``)."""

REJECTED = "rejected"
"""A challenger whose conflict was resolved for the incumbent."""
SEPARATOR = " · "


@dataclass(frozen=True, slots=True)
class Label:
    """A version's name: its state word, the marks that follow it, and flags for each."""

    state: str
    marks: tuple[str, ...] = ()

    @property
    def words(self) -> str:
        """The label as shown: ``current · disputed · unverified``."""
        return SEPARATOR.join((self.state, *self.marks))

    @property
    def unverified(self) -> bool:
        """Its evidence was not found in its episode."""
        return UNVERIFIED in self.marks

    @property
    def disputed(self) -> bool:
        """It is one side of a disputed key."""
        return DISPUTED in (self.state, *self.marks)

    @property
    def in_conflict(self) -> bool:
        """It was refused and its conflict is open."""
        return self.state == IN_CONFLICT

    @property
    def superseded(self) -> bool:
        """A later fact replaced it."""
        return self.state == SUPERSEDED


def version_label(
    *,
    status: ReadStatus,
    disputed: bool,
    role: Role = "incumbent",
    conflict: ConflictState | None = None,
    superseded: bool = False,
    evidence_verified: bool = True,
) -> Label:
    """The label of a version (``role`` incumbent) or of a challenger (with its ``conflict``).

    ``status`` is the read status of the version, or for a challenger that of the version it
    challenged; ``disputed`` whether the key is disputed (for a challenger: by its conflict);
    ``superseded`` whether a later fact replaced the version. An incumbent's label does not
    depend on ``conflict``: a refused challenger leaves it as it was. A challenger without a
    conflict state names nothing and is refused (ValueError).
    """
    unverified = () if evidence_verified else (UNVERIFIED,)
    if role == "challenger" and conflict != "won":
        if conflict == "open":
            return Label(DISPUTED if disputed else IN_CONFLICT, unverified)
        if conflict == "lost":
            return Label(REJECTED, unverified)
        raise ValueError("a challenger's label needs its conflict state")
    state: str = SUPERSEDED if status == "past" and superseded else status
    marks = (DISPUTED,) if disputed and status != "retired" else ()
    return Label(state, marks + unverified)
