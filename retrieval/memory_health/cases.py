"""The nine-case fixture: receipts whose verdicts are known, to pin the classifier down.

Each case is a ``HealthFile`` and the verdict and operating state expected for each of its
expectations, in order (``cases.json`` next to this module).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from retrieval.memory_health.classifier import classify_all
from store.contract.common import Identifier
from store.contract.health import HealthFile, OperatingState, Verdict, VerdictCode

CASES_PATH = Path(__file__).with_name("cases.json")


class ExpectedVerdict(BaseModel):
    """The verdict and operating state one expectation must get."""

    model_config = ConfigDict(extra="forbid")

    verdict: VerdictCode
    operating_state: OperatingState


class HealthCase(BaseModel):
    """One named situation: its evidence and expectations, and the verdicts they must get."""

    model_config = ConfigDict(extra="forbid")

    name: Identifier = Field(description="A short unique name")
    description: str = Field(description="The situation, in one sentence")
    input: HealthFile = Field(description="The classifier's input")
    expected: list[ExpectedVerdict] = Field(description="One per expectation of the input")

    @model_validator(mode="after")
    def _one_expected_per_expectation(self) -> HealthCase:
        if len(self.expected) != len(self.input.expectations):
            raise ValueError(
                f"{len(self.input.expectations)} expectation(s) but"
                f" {len(self.expected)} expected verdict(s)"
            )
        return self


class HealthCases(BaseModel):
    """A fixture file: a list of cases."""

    model_config = ConfigDict(extra="forbid")

    cases: list[HealthCase]


@dataclass(frozen=True)
class CaseResult:
    """A case and the verdicts the classifier gave it."""

    case: HealthCase
    verdicts: list[Verdict]

    def matches(self) -> list[bool]:
        """Per expectation, in order: whether its verdict and state are the expected ones."""
        return [
            (want.verdict, want.operating_state) == (got.verdict, got.operating_state)
            for want, got in zip(self.case.expected, self.verdicts, strict=True)
        ]

    def mismatches(self) -> list[str]:
        """One line per expectation whose verdict or state differs from the expected one."""
        return [
            f"{self.case.name}[{index}]: expected {want.verdict}/{want.operating_state},"
            f" got {got.verdict}/{got.operating_state}"
            for index, (want, got, ok) in enumerate(
                zip(self.case.expected, self.verdicts, self.matches(), strict=True)
            )
            if not ok
        ]


def load_cases(path: Path = CASES_PATH) -> list[HealthCase]:
    """The cases of a fixture file (raises pydantic's ValidationError when malformed)."""
    return HealthCases.model_validate_json(path.read_bytes()).cases


def run_cases(cases: list[HealthCase]) -> list[CaseResult]:
    """Classify every case's expectations against its own evidence."""
    return [
        CaseResult(
            case,
            classify_all(
                case.input.expectations, case.input.evidence(), tenant_id=case.input.tenant_id
            ),
        )
        for case in cases
    ]


def case_mismatches(cases: list[HealthCase]) -> list[str]:
    """Every expectation whose verdict differs from its case's expected one; empty: all pass."""
    return [line for result in run_cases(cases) for line in result.mismatches()]
