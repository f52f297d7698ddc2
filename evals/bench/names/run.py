"""``sgam bench --only names``: finding a subject by its name in a tenant of 100,000, against
GET fact, over HTTP, in one run.

A scratch embedded PostgreSQL, a real ``sgam serve`` on it, and a tenant of people
(``evals.bench.names.data``): each holds one fact, has its id and its display name as names,
and the measured people were declared over HTTP. Each case asks for the same measured keys:

- ``fact_current``: ``GET /v1/facts/{subject}/{attribute}``, the floor;
- ``context_subject_k0``: ``POST /v1/context`` with ``subject``, ``attributes`` and
  ``evidence_k: 0``: the context call without finding a name;
- ``names_full``, ``names_surname``, ``names_near``: the same without ``subject``, the question
  naming the person by full name, by surname alone, and by a near spelling (the trigram path).

Before the timings every named question is asked once and its chosen subject checked, and the
store's two lookups are explained under the app role (``evals.bench.names.checks``). With one
client the cases are timed call by call in turn (``evals.bench.names.timing``): only ratios
within one run mean anything on a shared machine.

    python -m evals.bench.names.run [--quick] [--subjects 100000] [--seconds 5]

Prints Markdown tables and writes ``evals/results/names.json``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from evals.bench.names.checks import bulk_rows_match_put, explain_lookups
from evals.bench.names.data import (
    NamedKey,
    Person,
    declare_display_names,
    import_lines,
    measured_keys,
    people,
)
from evals.bench.names.report import FLOOR, added_ms, ratios, report_text, save
from evals.bench.names.timing import NameRequest, measure
from evals.bench.served.cases import expect_ok
from evals.bench.served.data import TENANT
from evals.bench.served.http import machine
from evals.bench.served.runner import Timing
from evals.bench.served.server import Served, declare_attributes, rss_mib, serve
from store.bench import migrate_database, raw_connection, scratch_database, sql
from store.service import open_store

RESULTS = Path(__file__).parents[2] / "results" / "names.json"
FULL_SUBJECTS = 100_000
QUICK_SUBJECTS = 10_000
MEASURED = 64
SEED = 20_260_612
MISSES_KEPT = 10
"""Questions that chose another subject or none, kept per case as examples."""
REASON_KEPT = 400
"""Characters kept of a miss's reason (one may list every subject weighed)."""


def _context(name_of: Callable[[NamedKey], str] | None) -> NameRequest:
    """A context call about the key: with its subject given (``name_of`` None), or named."""

    def request(client: httpx.Client, key: NamedKey) -> httpx.Response:
        body: dict[str, Any] = {"attributes": [key.attribute], "evidence_k": 0}
        if name_of is None:
            body |= {"question": key.question(key.full_name), "subject": key.subject}
        else:
            body["question"] = key.question(name_of(key))
        return client.post("/v1/context", json=body)

    return request


NAMED: dict[str, Callable[[NamedKey], str]] = {
    "names_full": lambda key: key.full_name,
    "names_surname": lambda key: key.surname,
    "names_near": lambda key: key.near_spelling,
}
"""Each name-resolution case and the name its questions call the subject by."""
CASES: dict[str, NameRequest] = {
    FLOOR: lambda client, key: client.get(f"/v1/facts/{key.subject}/{key.attribute}"),
    "context_subject_k0": _context(None),
    **{case: _context(name_of) for case, name_of in NAMED.items()},
}


@dataclass(frozen=True)
class Options:
    """One run: the tenant's size, the keys measured, and how long each case runs."""

    subjects: int = FULL_SUBJECTS
    measured: int = MEASURED
    seconds: float = 5.0
    clients: tuple[int, ...] = (1,)
    min_calls: int = 5
    seed: int = SEED
    quick: bool = False

    @classmethod
    def of(cls, *, quick: bool, **given: Any) -> Options:
        """Options from the command line: unset ones take the quick or the full defaults."""
        defaults: dict[str, Any] = {"quick": quick}
        if quick:
            defaults |= {"subjects": QUICK_SUBJECTS, "seconds": 3.0}
        return cls(**(defaults | {k: v for k, v in given.items() if v is not None}))

    @property
    def timing(self) -> Timing:
        """How long each case runs."""
        return Timing(self.seconds, warmup=min(1, self.min_calls - 1), min_calls=self.min_calls)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _load(
    conninfo: str, served: Served, everyone: Sequence[Person], keys: Sequence[NamedKey]
) -> dict[str, Any]:
    """Every person's fact by bulk import, display names in batches, the measured people's
    over HTTP; then analyze."""
    declare_attributes(served)
    measured = {key.subject for key in keys}
    started = time.perf_counter()
    with open_store(conninfo, max_connections=2) as store:
        imported = store.episodes.import_lines(import_lines(everyone))
    load: dict[str, Any] = {"import_s": round(time.perf_counter() - started, 1)}
    load["candidates"] = imported.candidates
    started = time.perf_counter()
    with raw_connection(conninfo) as conn:
        declare_display_names(conn, [p for p in everyone if p.subject not in measured])
    with served.client() as client:
        for person in everyone:
            if person.subject in measured:
                body = {"display_name": person.display_name}
                expect_ok(client.put(f"/v1/subjects/{person.subject}", json=body))
    load["names_s"] = round(time.perf_counter() - started, 1)
    with raw_connection(conninfo, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE subject_names")
        conn.execute("VACUUM ANALYZE fact_versions")
        for table in ("subject_names", "fact_versions"):
            count = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))
            row = conn.execute(count).fetchone()
            load[f"{table}_rows"] = int(row[0]) if row else 0
    return load


def _git(*args: str) -> str | None:
    git = shutil.which("git")
    if git is None:  # an installed copy: no repository to ask
        return None
    root = Path(__file__).resolve().parent.parent
    found = subprocess.run(  # noqa: S603 - git, arguments we built
        [git, "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    return found.stdout if found.returncode == 0 else None


def code_version() -> dict[str, Any]:
    """The commit the server ran from, and the product files changed since (others' edits
    move the figures)."""
    head = _git("rev-parse", "--short", "HEAD")
    changed = _git("status", "--porcelain", "--", "store", "retrieval", "server") or ""
    return {"commit": head.strip() if head else None, "changed": changed.splitlines()}


def _bulk_samples(everyone: Sequence[Person], keys: Sequence[NamedKey]) -> list[Person]:
    """People whose names the bulk load declared: one with a middle initial, the first, the
    last."""
    measured = {key.subject for key in keys}
    bulk = [person for person in everyone if person.subject not in measured]
    middle = [person for person in bulk if person.middle][:1]
    return list({person.subject: person for person in [*middle, bulk[0], bulk[-1]]}.values())


def _resolution(served: Served, keys: Sequence[NamedKey]) -> dict[str, Any]:
    """Each named case's questions asked once: the subject each chose, against the key's."""
    found: dict[str, Any] = {}
    with served.client() as client:
        for case, name_of in NAMED.items():
            counts: Counter[str] = Counter()
            misses: list[dict[str, Any]] = []
            for key in keys:
                plan = expect_ok(CASES[case](client, key)).json()["plan"]
                chosen = plan["subject"]
                verdict = (
                    "right" if chosen == key.subject else "none" if chosen is None else "wrong"
                )
                counts[verdict] += 1
                if verdict != "right" and len(misses) < MISSES_KEPT:
                    reason = str(plan["reasons"].get("subject", ""))
                    misses.append(
                        {
                            "name": name_of(key),
                            "chose": chosen,
                            "reason": reason[:REASON_KEPT],
                            "reason_chars": len(reason),
                        }
                    )
            found[case] = {"right": 0, "wrong": 0, "none": 0} | dict(counts)
            found[case]["misses"] = misses
    return found


def run(options: Options, *, say: Callable[[str], None] = _say) -> dict[str, Any]:
    """Load the tenant, serve it, check the lookups and time every case."""
    started = time.perf_counter()
    about = machine()
    everyone = people(options.subjects, seed=options.seed)
    keys = measured_keys(everyone, options.measured)
    if not keys:
        raise ValueError(f"none of {options.subjects} people has a surname of their own")
    found: dict[str, Any] = {}
    with ExitStack() as stack:
        conninfo = stack.enter_context(scratch_database(None))
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sgam-names-")))
        migrate_database(conninfo)
        with open_store(conninfo, max_connections=1) as store:
            store.admin.create_tenant(TENANT)
        served = stack.enter_context(serve(conninfo, log=scratch / "serve.log"))
        say(f"loading {len(everyone):,} people (bulk import, then their names)")
        found["load"] = _load(conninfo, served, everyone, keys)
        found["checks"] = explain_lookups(conninfo, keys[0])
        samples = _bulk_samples(everyone, keys)
        found["checks"]["bulk_rows_match_put"] = bulk_rows_match_put(conninfo, served, samples)
        say(f"asking each of {len(keys)} keys by name, then timing {len(CASES)} cases")
        found["resolution"] = _resolution(served, keys)
        found["reads"] = measure(
            served, CASES, keys, clients=options.clients, timing=options.timing
        )
        found["server"] = rss_mib(served.pid)
    about["load_average_at_end"] = [round(load, 2) for load in os.getloadavg()]
    found["ratios_to_fact_current"] = ratios(found["reads"])
    found["over_context_subject_k0_ms"] = added_ms(found["reads"])
    settings = asdict(options) | {"measured_keys": len(keys), "cases": list(CASES)}
    settings["code"] = code_version()
    total = {"total_s": round(time.perf_counter() - started, 1)}
    return {"machine": about, "settings": settings, **found, "timings": total}


def bench_names(options: Options, out: Path) -> dict[str, Any]:
    """Run, print the tables, write ``out``; the results."""
    results = run(options)
    typer.echo(report_text(results))
    typer.echo(f"ran in {results['timings']['total_s']} s; wrote {save(results, out)}")
    return results


def main(
    *,
    quick: Annotated[bool, typer.Option(help="10,000 subjects, 3 s a case.")] = False,
    subjects: Annotated[int | None, typer.Option(min=20, help="Subjects [100,000].")] = None,
    seconds: Annotated[float | None, typer.Option(min=0, help="Seconds a case [5].")] = None,
    clients: Annotated[list[int] | None, typer.Option(min=1, help="Clients (repeatable).")] = None,
    min_calls: Annotated[int, typer.Option(min=1, help="Timed calls per case at least.")] = 5,
    out: Annotated[Path, typer.Option(dir_okay=False, help="Results JSON.")] = RESULTS,
) -> None:
    """Time name resolution in a tenant of many subjects against GET fact."""
    chosen = tuple(sorted(set(clients))) if clients else None
    options = Options.of(
        quick=quick, subjects=subjects, seconds=seconds, clients=chosen, min_calls=min_calls
    )
    bench_names(options, out)


if __name__ == "__main__":
    typer.run(main)
