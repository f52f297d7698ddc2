"""A purge beside writers and readers: it loses nothing unexpired and shows no half-purged episode.

The clock is frozen three days after the history was written, so what the purge deletes (the
``ephemeral`` episodes' text and vectors, and ``level`` versions that ended two days ago) is fixed
whatever the interleaving; writers meanwhile assert new values of the same keys and record new
episodes, and readers keep reading the old episodes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from psycopg_pool import ConnectionPool

from store.db.clock import ManualClock
from store.service import MemoryStore
from tests.conftest import ts
from tests.helpers import assert_value, declare, owner_connection, record
from tests.retention_helpers import LengthModel

T0 = ts("2026-06-01T00:00:00Z")
SUBJECTS = [f"s{n}" for n in range(12)]
WRITERS = 3
READERS = 2


def _history(store: MemoryStore, tenant: str, clock: ManualClock) -> None:
    """Level 1 for every subject from T0 (its own ephemeral episode); level 2 from T0+1h for
    the even ones, which closes their level 1 an hour after it began."""
    clock.set(T0)
    declare(store, tenant, "level", "integer", retention_class="ephemeral")
    for subject in SUBJECTS:
        record(store, tenant, f"old-{subject}", "2026-06-01T00:00:00Z", text=f"{subject} is 1",
               retention_class="ephemeral", subjects=[subject])  # fmt: skip
        assert_value(store, tenant, f"old-{subject}", "1", "2026-06-01T00:00:00Z",
                     subject=subject, attribute="level")  # fmt: skip
    clock.set(T0 + timedelta(hours=1))
    for subject in SUBJECTS[::2]:
        assert_value(store, tenant, f"old-{subject}", "2", "2026-06-01T01:00:00Z",
                     subject=subject, attribute="level")  # fmt: skip


def _run_all(jobs: list[Callable[[], None]]) -> list[BaseException]:
    """Run the jobs on threads at once; the errors they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(len(jobs))

    def run(job: Callable[[], None]) -> None:
        start.wait()
        try:
            job()
        except BaseException as error:  # noqa: BLE001 - reported to the test below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


def test_a_purge_beside_writers_and_readers_loses_nothing_unexpired(
    pool: ConnectionPool, clock: ManualClock, tenant: str
) -> None:
    store = MemoryStore(pool, clock=clock, embedder=LengthModel())
    _history(store, tenant, clock)
    clock.set(T0 + timedelta(days=3))
    purged = threading.Event()
    seen: list[tuple[Any, ...]] = []

    def purge() -> None:
        store.retention.purge_tenant(tenant, receipt_retention=timedelta(days=90))
        purged.set()

    def writer(number: int) -> Callable[[], None]:
        def write() -> None:
            for subject in SUBJECTS[number::WRITERS]:
                new, at = f"new-{subject}", "2026-06-04T00:00:00Z"
                record(store, tenant, new, at, text=f"{subject} is 3", retention_class="ephemeral")
                result = assert_value(
                    store, tenant, new, "3", at, subject=subject, attribute="level"
                )
                assert result.status == "written", result

        return write

    def reader() -> None:
        # One statement per look: an episode is whole (text and vector) or a stub (neither).
        with owner_connection(pool) as conn:
            conn.autocommit = True
            while True:
                done = purged.is_set()
                rows = conn.execute(
                    "SELECT e.id, e.text IS NOT NULL, e.purged_at IS NULL,"
                    " EXISTS (SELECT FROM episode_vectors AS v"
                    "         WHERE v.tenant_id = e.tenant_id AND v.episode_id = e.id)"
                    " FROM episodes AS e WHERE e.tenant_id = %(t)s AND e.id LIKE 'old-%%'",
                    {"t": tenant},
                ).fetchall()
                seen.extend(rows)
                for subject in SUBJECTS:
                    episode = store.episodes.get(tenant, f"old-{subject}")
                    seen.append((episode.id, episode.text is not None, episode.purged_at is None))
                if done:
                    return

    errors = _run_all([purge, *(writer(n) for n in range(WRITERS)), *[reader] * READERS])
    assert errors == []
    assert seen
    assert all(len(set(row[1:])) == 1 for row in seen), [r for r in seen if len(set(r[1:])) > 1]

    # Every old episode sources a current version: each is a stub now, none deleted.
    for subject in SUBJECTS:
        old = store.episodes.get(tenant, f"old-{subject}")
        assert (old.text, old.purged_at) == (None, clock()), subject
        assert store.episodes.get(tenant, f"new-{subject}").text == f"{subject} is 3"
    # Per key exactly the versions that had not expired, whichever ran first.
    t1h, t3d = T0 + timedelta(hours=1), ts("2026-06-04T00:00:00Z")
    for n, subject in enumerate(SUBJECTS):
        history = [
            (v.value, v.valid_from, v.valid_to, v.retired_at is None)
            for v in store.facts.history(tenant, subject, "level")
        ]
        if n % 2:  # level 1 was current until the writer closed it
            expected = [(1, T0, None, False), (1, T0, t3d, True), (3, t3d, None, True)]
        else:  # level 1 ended at T0+1h: both its versions went
            expected = [(2, t1h, None, False), (2, t1h, t3d, True), (3, t3d, None, True)]
        assert history == expected, subject
