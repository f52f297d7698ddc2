"""What the name-resolution benchmark checks besides timings: the plans, and the bulk rows.

The plans are those of the store's own lookups (``store.subjects.names.find_by_keys`` and
``find_similar``), run as the API runs them: ``SET ROLE sgam_app`` and the tenant named by
``set_config('sgam.tenant_id', ...)``. ``auto_explain`` sends the executed plans to the
client (nested statements too, so the body of ``sgam_similar_subject_names``, which runs as
the table's owner, is seen as it runs), analyzed, with buffers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from evals.bench.names.data import NamedKey, name_rows
from evals.bench.served.data import TENANT
from evals.bench.served.server import Served
from retrieval.question.names import asked_keys, question_grams, similar_texts
from retrieval.question.subjects import BEST_SIMILAR, WEIGHED_SIMILARITY
from store.bench import (
    APP_ROLE,
    Connection,
    Diagnostic,
    find_by_keys,
    find_similar,
    raw_connection,
    sql,
)

KEY_INDEX = "subject_names_key"
TRIGRAM_INDEX = "subject_names_similar"

_EXPLAIN_SETTINGS = {
    "auto_explain.log_min_duration": "0",
    "auto_explain.log_analyze": "on",
    "auto_explain.log_buffers": "on",
    "auto_explain.log_nested_statements": "on",
    "client_min_messages": "log",
}
_DURATION = re.compile(r"duration: ([\d.]+) ms")
_ROWS = re.compile(r"actual time=[\d.]+\.\.[\d.]+ rows=([\d.]+)")


def _plans(conninfo: str, run: Callable[[Connection], object]) -> list[str]:
    """The plans of the statements ``run(conn)`` executes under the app role, as text; the
    second of two runs, as a served connection finds its caches warm."""
    plans: list[str] = []

    def keep(notice: Diagnostic) -> None:
        message = notice.message_primary or ""
        if "Query Text" in message and "set_config(" not in message:
            plans.append(message)

    with raw_connection(conninfo, autocommit=True) as conn:
        conn.add_notice_handler(keep)
        conn.execute("LOAD 'auto_explain'")
        for name, value in _EXPLAIN_SETTINGS.items():
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(APP_ROLE)))
        for _ in range(2):
            plans.clear()
            with conn.transaction():
                conn.execute("SELECT set_config('sgam.tenant_id', %s, true)", (TENANT,))
                run(conn)
    return plans


def _duration(plan: str) -> float | None:
    match = _DURATION.search(plan)
    return float(match[1]) if match else None


def _rows(plan: str) -> int | None:
    match = _ROWS.search(plan)
    return round(float(match[1])) if match else None


def _summary(plans: Sequence[str], index: str) -> dict[str, Any]:
    """Whether ``index`` served the lookup; how long the store's statement took (the last
    plan) and the statements inside it (a function's body); and the plans."""
    return {
        "index": index,
        "used": any(re.search(rf"(Scan using|Bitmap Index Scan on) {index}\b", p) for p in plans),
        "statement_ms": _duration(plans[-1]) if plans else None,
        "rows": _rows(plans[-1]) if plans else None,
        "nested_ms": [_duration(plan) for plan in plans[:-1]],
        "plans": [plan.splitlines() for plan in plans],
    }


def explain_lookups(conninfo: str, key: NamedKey) -> dict[str, Any]:
    """The plans of the key lookup (the full name's question) and of the trigram search (the
    near spelling's), under the app role."""
    full = key.question(key.full_name)
    keys = asked_keys(question_grams(full))
    key_plans = _plans(conninfo, lambda conn: find_by_keys(conn, TENANT, keys))
    near = key.question(key.near_spelling)
    texts = similar_texts(question_grams(near))
    similar_plans = _plans(
        conninfo,
        lambda conn: find_similar(conn, texts, threshold=WEIGHED_SIMILARITY, best=BEST_SIMILAR),
    )
    return {
        "key_lookup": {
            "question": full,
            "keys": len(keys.names) + len(keys.surnames) + len(keys.acronyms),
        }
        | _summary(key_plans, KEY_INDEX),
        "trigram": {"question": near, "texts": texts} | _summary(similar_plans, TRIGRAM_INDEX),
    }


def bulk_rows_match_put(conninfo: str, served: Served, people: Sequence[Any]) -> dict[str, Any]:
    """Whether the bulk-declared rows of ``people`` are the rows ``PUT /v1/subjects/{id}``
    leaves: their rows before, the same names declared over HTTP, their rows after."""
    subjects = [person.subject for person in people]
    with raw_connection(conninfo) as conn:
        before = name_rows(conn, subjects)
    with served.client() as client:
        for person in people:
            client.put(
                f"/v1/subjects/{person.subject}", json={"display_name": person.display_name}
            ).raise_for_status()
    with raw_connection(conninfo) as conn:
        after = name_rows(conn, subjects)
    return {"subjects": subjects, "rows": len(after), "match": before == after}
