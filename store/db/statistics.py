"""The planner's statistics after a bulk load: ANALYZE the tables a load just filled.

Right after a load a table has no statistics (or those of a much smaller table), and the
planner guesses: a subject's evidence search once rescanned the subject's rows per vector and
ran 15 times slower than after ANALYZE. Autovacuum analyzes eventually, so where the store
knows data arrived in bulk it analyzes the tables at once.

Only a table's owner (or a role granted MAINTAIN) may ANALYZE it, so this runs as the URL's own
role, the owner in the embedded default (``sgam_owner``; store/db/roles.py), not as the API's
``sgam_app``. A table the role may not analyze is skipped with a notice by PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import sql

from store.db.database import connect

IMPORTED = ("episodes", "episode_subjects", "fact_versions", "subject_names")
"""The tables ``sgam import`` fills (store/episodes/bulk_write.py)."""

EMBEDDED = ("episode_vectors",)
"""The table embedding a batch of episodes fills."""


def analyze(conninfo: str, tables: Sequence[str]) -> None:
    """ANALYZE ``tables`` as the URL's own role, each in its own statement."""
    with connect(conninfo) as conn:
        conn.autocommit = True
        for table in tables:
            conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
