"""Healthy evidence for one expected memory, and ways to break each layer of it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, get_args
from uuid import UUID

from store.contract.common import MemoryType
from store.contract.health import (
    EpisodicMemory,
    Evidence,
    Expectation,
    Layer,
    MemoryRef,
    ProceduralMemory,
    SemanticMemory,
    VerdictCode,
    WorkingMemory,
)
from store.contract.receipts import Receipt

TENANT = "tenant-health"
SCOPE = "project:acme"
OTHER_SCOPE = "project:globex"
DECISION = UUID("d0000000-0000-4000-8000-000000000001")
DECIDED_AT = datetime(2026, 11, 3, 9, 0, tzinfo=UTC)
WRITTEN_AT = DECIDED_AT - timedelta(minutes=1)
BUDGET_S = 3600
MEMORY_TYPES: tuple[MemoryType, ...] = ("working", "semantic", "episodic", "procedural")
BREAKABLE: tuple[Layer, ...] = tuple(layer for layer in get_args(Layer) if layer != "healthy")
LAYER_CODES: dict[Layer, VerdictCode] = {
    "available": "UNKNOWN",
    "written": "WRITE_MISSING",
    "read": "READ_MISSING",
    "scope": "SCOPE_MISMATCH",
    "freshness": "STALE",
    "provenance": "NO_PROVENANCE",
    "activated": "NOT_ACTIVATED",
}
INVARIANT_CODES: dict[MemoryType, VerdictCode] = {
    "working": "CONTINUITY_LOST",
    "semantic": "SUPERSEDED",
    "episodic": "OUTCOMELESS_EPISODE",
    "procedural": "UNSAFE_PROCEDURE",
}


def code_of(layer: Layer, memory_type: MemoryType) -> VerdictCode:
    """The verdict a failure of ``layer`` gives a memory of ``memory_type``."""
    return INVARIANT_CODES[memory_type] if layer == "invariant" else LAYER_CODES[layer]


def memory_of(memory_type: MemoryType, first: str, second: str) -> MemoryRef:
    """A memory of the given type named by two identifiers."""
    if memory_type == "semantic":
        return SemanticMemory(type="semantic", subject=first, attribute=second)
    if memory_type == "working":
        return WorkingMemory(type="working", thread=first, version=2)
    if memory_type == "episodic":
        return EpisodicMemory(type="episodic", episode_id=first)
    return ProceduralMemory(type="procedural", procedure=first, activation_scope=second)


def receipt(memory: MemoryRef, number: int, **fields: Any) -> Receipt:
    """A receipt of ``memory``, a write in the expected scope unless ``fields`` say otherwise."""
    scope = memory.scope_hash(TENANT, SCOPE, secret=b"")
    values: dict[str, Any] = {
        "receipt_id": UUID(int=number),
        "decision_id": None,
        "action": "write",
        "memory_type": memory.type,
        "memory_key": memory.memory_key(secret=b""),
        "version": "2",
        "expected_scope_hash": scope,
        "observed_scope_hash": scope,
        "written_at": WRITTEN_AT,
        "read_at": None,
        "freshness_budget_s": None,
        "provenance": "write:2",
        "activated": False,
        "invalidation": None,
        "outcome": "succeeded" if memory.type == "episodic" else None,
        "approved": True if memory.type == "procedural" else None,
        "recorded_at": WRITTEN_AT,
    }
    values.update(fields)
    return Receipt.model_validate(values)


def read(memory: MemoryRef, number: int, **fields: Any) -> Receipt:
    """A healthy read of ``memory`` for ``DECISION``, changed by ``fields``."""
    values: dict[str, Any] = {
        "decision_id": DECISION,
        "action": "read",
        "read_at": DECIDED_AT,
        "recorded_at": DECIDED_AT,
        "activated": True,
        "invalidation": "current",
    }
    values.update(fields)
    return receipt(memory, number, **values)


@dataclass(frozen=True)
class Situation:
    """An expectation and its evidence: one write and one read unless broken."""

    expectation: Expectation
    available: bool
    write: Receipt | None
    read: Receipt

    def evidence(self) -> Evidence:
        """The situation's evidence."""
        receipts = [self.read] if self.write is None else [self.write, self.read]
        return Evidence(available=self.available, receipts=receipts)


def healthy(memory: MemoryRef, task_outcome: Any = None) -> Situation:
    """A situation every layer of which passes."""
    expectation = Expectation(
        decision_id=DECISION,
        memory=memory,
        scope=SCOPE,
        freshness_budget_s=BUDGET_S,
        task_outcome=task_outcome,
    )
    return Situation(expectation, True, receipt(memory, 1), read(memory, 2))


def broken(situation: Situation, layers: Iterable[Layer]) -> Situation:
    """``situation`` with each of ``layers`` made to fail; breaking a layer never makes an
    earlier one fail, except ``written``, which cannot fail while an in-scope read found the
    memory, so it also moves the read out of scope."""
    memory = situation.expectation.memory
    other = memory.scope_hash(TENANT, OTHER_SCOPE, secret=b"")
    changes: dict[str, Any] = {}
    wanted = set(layers)
    for layer in reversed(BREAKABLE):  # earlier layers' changes win
        if layer not in wanted:
            continue
        if layer == "invariant":
            changes.update(_invariant_break(memory.type))
        elif layer == "activated":
            changes["activated"] = False
        elif layer == "provenance":
            changes["provenance"] = None
        elif layer == "freshness":
            changes["written_at"] = DECIDED_AT - timedelta(seconds=BUDGET_S + 1)
        elif layer in ("scope", "written"):
            changes["observed_scope_hash"] = other
        elif layer == "read":
            changes.update(written_at=None, version=None, invalidation=None, activated=False)
    result = replace(situation, read=situation.read.model_copy(update=changes))
    if "written" in wanted:
        result = replace(result, write=None)
    if "available" in wanted:
        result = replace(result, available=False)
    return result


def _invariant_break(memory_type: MemoryType) -> dict[str, Any]:
    if memory_type in ("working", "semantic"):
        return {"invalidation": "superseded"}
    if memory_type == "episodic":
        return {"outcome": "unknown"}
    return {"approved": False}
