"""The MCP tools' own argument models; the other tools take the HTTP bodies themselves."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from store.contract.common import Identifier, Timestamp
from store.contract.facts import AttributeDeclaration


class KeyInput(BaseModel):
    """One key: a subject and one of its attributes."""

    model_config = ConfigDict(extra="forbid")

    subject: Identifier = Field(description="The subject, e.g. mira")
    attribute: Identifier = Field(description="A declared attribute, e.g. passport_deadline")


class FactInput(KeyInput):
    """A key, and the valid time and knowledge time to read it at (both default to now)."""

    valid_at: Timestamp | None = Field(
        default=None,
        description="When the value must hold (RFC 3339 with an offset); default now, or"
        " known_at when only that is given",
    )
    known_at: Timestamp | None = Field(
        default=None,
        description="What was believed at this system time (RFC 3339 with an offset); default now",
    )


class AttributeInput(AttributeDeclaration):
    """An attribute to declare or redeclare, by name."""

    attribute: Identifier = Field(description="The attribute's id, e.g. passport_deadline")


class NoInput(BaseModel):
    """A tool that takes no arguments."""

    model_config = ConfigDict(extra="forbid")
