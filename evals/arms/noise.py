"""A noisy extraction: the same replay lines with some candidates missed or given a wrong value.

SGAM is written through typed candidates while the baselines read raw text; ``sgam_noisy``
shows how much of SGAM's lead rests on a clean extraction.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evals.arms.systems import DROPPED, Line


@dataclass(frozen=True)
class Noise:
    """A noisy extraction: the share of candidates missed and of candidates with a wrong value."""

    missing: float = 0.1
    wrong: float = 0.1
    seed: int = 7

    def __post_init__(self) -> None:
        if min(self.missing, self.wrong) < 0 or self.missing + self.wrong > 1:
            raise ValueError("noise shares must be non-negative and sum to at most 1")


def noisy_lines(lines: Sequence[Line], noise: Noise) -> tuple[list[Line], Counter[str]]:
    """The lines as a noisy extractor would have produced them, and what it did to them.

    Each update line, in order, is missed with probability ``missing`` (it becomes a
    ``dropped`` line keeping its ``now``) or gets a wrong value with probability ``wrong``:
    another value of the key's domain, one the same key holds at another time when it has
    any (so the scoring recognises it), else another value the attribute has in the tenant.
    Episodes, expiries and questions are left alone. Same lines and seed, same output.
    """
    key_values, tenant_values = _domains(lines)
    rng = random.Random(f"noise-{noise.seed}")
    changed: list[Line] = []
    counts: Counter[str] = Counter()
    for line in lines:
        if line.get("op") != "update":
            changed.append(line)
            continue
        draw = rng.random()
        candidate = line["candidate"]
        if draw < noise.missing:
            changed.append({"op": DROPPED, "tenant": line["tenant"]} | _clock_of(line))
            counts["missing"] += 1
            continue
        if draw < noise.missing + noise.wrong and candidate.get("value") is not None:
            true = str(candidate["value"])
            key = (line["tenant"], candidate.get("subject"), candidate.get("attribute"))
            options = [v for v in key_values[key] if v != true]
            options = options or [v for v in tenant_values[key[0], key[2]] if v != true]
            if options:
                changed.append(line | {"candidate": candidate | {"value": rng.choice(options)}})
                counts["wrong"] += 1
                continue
        changed.append(line)
        counts["clean"] += 1
    return changed, counts


def _clock_of(line: Mapping[str, Any]) -> dict[str, Any]:
    return {"now": line["now"]} if "now" in line else {}


def _domains(
    lines: Sequence[Line],
) -> tuple[dict[tuple[Any, ...], list[str]], dict[tuple[Any, ...], list[str]]]:
    """Values per (tenant, subject, attribute) and per (tenant, attribute), in first-seen order."""
    by_key: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    by_attribute: dict[tuple[Any, ...], list[str]] = defaultdict(list)

    def add(values: list[str], value: Any) -> None:
        if value is not None and str(value) not in values:
            values.append(str(value))

    for line in lines:
        if line.get("op") == "define":
            for value in line.get("enum_values") or ():
                add(by_attribute[line["tenant"], line["attribute"]], value)
        elif line.get("op") == "update":
            candidate = line["candidate"]
            subject, attribute = candidate.get("subject"), candidate.get("attribute")
            add(by_key[line["tenant"], subject, attribute], candidate.get("value"))
            add(by_attribute[line["tenant"], attribute], candidate.get("value"))
    return by_key, by_attribute
