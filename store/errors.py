"""The store's own errors: each carries a stable ``code`` and, where one is at fault, a ``field``.

Codes and their HTTP statuses are the contract's (``store.contract.problems.ERRORS``);
``server/`` maps these to problem+json; replay writes ``code`` and ``detail``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from store.contract.problems import ErrorCode


class StoreError(Exception):
    """Base class: a request the store refused, with a stable machine-readable code."""

    code: ClassVar[str] = ErrorCode.INTERNAL

    def __init__(self, detail: str, *, field: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.field = field
        self.refusal: DatabaseRefusal | None = None


@dataclass(frozen=True, slots=True)
class DatabaseRefusal:
    """Which rule of the database refused a statement: names only, never the values involved."""

    sqlstate: str | None
    constraint: str | None
    table: str | None


class InvalidInput(StoreError):
    """The input breaks a rule of the contract (bad id, naive timestamp, unknown attribute...)."""

    code = ErrorCode.INVALID


class NotFound(StoreError):
    """Nothing of that name exists for this tenant (or is known at that time)."""

    code = ErrorCode.NOT_FOUND


class Conflict(StoreError):
    """The request contradicts stored state (an episode id reused with other content...)."""

    code = ErrorCode.CONFLICT


class LegalHold(StoreError):
    """The request would erase data of a subject under legal hold."""

    code = ErrorCode.LEGAL_HOLD


class SchemaChangeRequiresMigration(Conflict):
    """A redeclaration that would change the value type or the name of an attribute: only a
    migration (``sgam attribute migrate``) converts the values it holds."""

    code = ErrorCode.SCHEMA_CHANGE_REQUIRES_MIGRATION


class UnconvertibleValues(Conflict):
    """A migration refused because values would not convert, with the list of them."""

    def __init__(
        self, detail: str, *, field: str | None = None, unconvertible: list[dict[str, Any]]
    ) -> None:
        super().__init__(detail, field=field)
        self.unconvertible = unconvertible


class DatabaseUnavailable(StoreError):
    """The configured database cannot be reached or lacks a required extension."""

    code = ErrorCode.UNAVAILABLE


def translate(error: Exception) -> StoreError:
    """The store's error for a database error that escaped the write path's own checks.

    It keeps the database's SQLSTATE, constraint and table as its ``refusal``, for the log.
    """
    translated = _translated(error)
    diag = getattr(error, "diag", None)
    translated.refusal = DatabaseRefusal(
        sqlstate=getattr(error, "sqlstate", None),
        constraint=getattr(diag, "constraint_name", None),
        table=getattr(diag, "table_name", None),
    )
    return translated


def _translated(error: Exception) -> StoreError:
    import psycopg  # noqa: PLC0415 - keeps this module importable without a driver loaded

    if isinstance(error, psycopg.errors.SerializationFailure | psycopg.errors.DeadlockDetected):
        return Conflict(
            "the write kept colliding with concurrent writers and was given up; retry it"
        )
    if isinstance(error, psycopg.errors.ForeignKeyViolation):
        return NotFound("a referenced record does not exist (it may have been erased meanwhile)")
    if isinstance(error, psycopg.errors.IntegrityError):
        diag = error.diag
        return Conflict(
            f"the database refused the write ({diag.constraint_name or diag.sqlstate}): "
            f"{diag.message_primary}"
        )
    if isinstance(error, psycopg.OperationalError):
        return DatabaseUnavailable(f"the database is unavailable: {error}")
    if isinstance(error, psycopg.errors.DataError):
        return InvalidInput(f"the database refused a value: {error.diag.message_primary}")
    return StoreError(f"unexpected database error: {error}")
