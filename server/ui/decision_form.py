"""The decision page's form: a memory the decision needed, named in the form's fields, turned
into the expectation ``POST /v1/health/classify`` takes (``store.contract.health``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any
from uuid import UUID

from pydantic import ValidationError

from store.contract.health import Expectation

MEMORY_TYPES = ("semantic", "working", "episodic", "procedural")

_KEYS: dict[str, tuple[str, ...]] = {
    "semantic": ("subject", "attribute"),
    "working": ("thread", "version"),
    "episodic": ("episode_id",),
    "procedural": ("procedure", "activation_scope"),
}
"""The fields that name a memory of each type (the API's own names)."""


@dataclass(frozen=True)
class MemoryAsked:
    """The form's fields as given (blank: not given); ``type`` blank: nothing asked."""

    type: str = ""
    subject: str = ""
    attribute: str = ""
    thread: str = ""
    version: str = ""
    episode_id: str = ""
    procedure: str = ""
    activation_scope: str = ""
    scope: str = ""
    freshness_budget_s: str = ""
    task_outcome: str = ""

    @classmethod
    def of(cls, query: Mapping[str, Any]) -> MemoryAsked:
        """The fields of a query string, each its first value, trimmed (the expectation's
        model checks each: an id's pattern and length, a number, an outcome)."""
        given = {}
        for field in fields(cls):
            value = query.get(field.name)
            given[field.name] = value.strip() if isinstance(value, str) else ""
        return cls(**given)


def asked_expectation(decision_id: UUID, asked: MemoryAsked) -> Expectation:
    """The expectation the form names; ValidationError when a field is missing or malformed."""
    memory: dict[str, Any] = {"type": asked.type}
    for name in _KEYS.get(asked.type, ()):
        value = getattr(asked, name)
        if value:
            memory[name] = int(value) if name == "version" and value.isdigit() else value
    body: dict[str, Any] = {"decision_id": decision_id, "memory": memory}
    if asked.scope:
        body["scope"] = asked.scope
    if asked.freshness_budget_s:
        budget = asked.freshness_budget_s
        body["freshness_budget_s"] = int(budget) if budget.isdigit() else budget
    if asked.task_outcome:
        body["task_outcome"] = asked.task_outcome
    return Expectation.model_validate(body)


def why_invalid(error: ValidationError) -> str:
    """What the form got wrong, by field, in words a person reads."""
    problems = []
    for item in error.errors():
        where = [str(part) for part in item["loc"] if str(part) not in MEMORY_TYPES]
        name = where[-1] if where else "the form"
        problems.append(f"{name.replace('_', ' ')}: {item['msg']}")
    return "Check the memory asked about: " + "; ".join(problems) + "."
