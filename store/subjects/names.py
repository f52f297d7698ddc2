"""Subject names (migration 0024): kept for every subject, declared, learned, and looked up.

Each name is stored folded (``store.contract.common.fold_name``) and once per key ``sgam_name_keys``
derives, so a question's words find it by plain equality on ``(tenant_id, kind, key)``. Ids are
noted as names wherever a subject first appears (a fact written, an episode naming it, a
merge), so a subject nobody named is still found by its id's words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import psycopg

from store.contract.common import fold_name
from store.contract.results import LearnedName, SubjectNames

NameSource = Literal["id", "display", "alias", "learned"]

_NOTE_IDS = """
INSERT INTO subject_names (tenant_id, subject, source, name, folded, kind, key, recorded_at)
SELECT %(tenant_id)s::text, s, 'id', s, sgam_fold_id(s), k.kind, k.key, %(now)s
FROM unnest(%(subjects)s::text[]) AS s, sgam_name_keys(sgam_fold_id(s)) AS k
WHERE NOT EXISTS (
    SELECT FROM subject_names AS n
    WHERE n.tenant_id = %(tenant_id)s::text AND n.subject = s AND n.source = 'id'
)
ON CONFLICT DO NOTHING
"""

_INSERT_NAMES = """
INSERT INTO subject_names
    (tenant_id, subject, source, name, folded, kind, key, episode_id, recorded_at)
SELECT %(tenant_id)s::text, n.subject, n.source, n.name, n.folded, k.kind, k.key, n.episode_id,
       %(now)s
FROM unnest(%(subjects)s::text[], %(sources)s::text[], %(names)s::text[], %(folded)s::text[],
            %(episodes)s::text[]) AS n (subject, source, name, folded, episode_id),
     sgam_name_keys(n.folded) AS k
ON CONFLICT DO NOTHING
"""


def note_ids(
    conn: psycopg.Connection[Any], tenant_id: str, subjects: Iterable[str], *, now: datetime
) -> None:
    """Keep each subject's id as one of its names (nothing for ids already kept)."""
    wanted = sorted(set(subjects))
    if wanted:
        conn.execute(_NOTE_IDS, {"tenant_id": tenant_id, "subjects": wanted, "now": now})


def learn(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    names: Iterable[tuple[str, str, str]],
    *,
    texts: Mapping[str, str | None],
    now: datetime,
) -> None:
    """Learn ``(subject, name, episode_id)`` triples, in one statement; a name its episode's
    text (``texts``, by episode id) does not contain, folded, is not learned: a model's guess at
    a name is not a name the text wrote."""
    folded_texts = {episode: f" {fold_name(text or '')} " for episode, text in texts.items()}
    rows = sorted(
        {
            (subject, "learned", name.strip(), folded, episode)
            for subject, name, episode in names
            if (folded := fold_name(name)) and f" {folded} " in folded_texts.get(episode, "")
        }
    )
    _insert(conn, tenant_id, rows, now=now)


def note(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    subjects: Iterable[str],
    names: Iterable[tuple[str, str]],
    *,
    episode_id: str,
    episode_text: str | None,
    now: datetime,
) -> None:
    """What one episode shows of subjects: their ids kept as names, and the ``(subject, name)``
    pairs its text wrote learned."""
    note_ids(conn, tenant_id, subjects, now=now)
    learn(
        conn,
        tenant_id,
        [(subject, name, episode_id) for subject, name in names],
        texts={episode_id: episode_text},
        now=now,
    )


def declare(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    subject: str,
    *,
    display_name: str | None,
    aliases: Sequence[str],
    now: datetime,
) -> None:
    """Replace the subject's declared names (display name and aliases); keep the id's name
    and the learned ones."""
    conn.execute(
        "DELETE FROM subject_names WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s"
        " AND source IN ('display', 'alias')",
        {"tenant_id": tenant_id, "subject": subject},
    )
    rows: list[tuple[str, NameSource, str, str, str | None]] = []
    if display_name is not None:
        rows.append((subject, "display", display_name.strip(), fold_name(display_name), None))
    rows.extend((subject, "alias", alias.strip(), fold_name(alias), None) for alias in aliases)
    note_ids(conn, tenant_id, [subject], now=now)
    _insert(conn, tenant_id, [row for row in rows if row[3]], now=now)


def _insert(
    conn: psycopg.Connection[Any],
    tenant_id: str,
    rows: Sequence[tuple[str, str, str, str, str | None]],
    *,
    now: datetime,
) -> None:
    if not rows:
        return
    subjects, sources, names, folded, episodes = (
        list(column) for column in zip(*rows, strict=True)
    )
    conn.execute(
        _INSERT_NAMES,
        {
            "tenant_id": tenant_id,
            "subjects": subjects,
            "sources": sources,
            "names": names,
            "folded": folded,
            "episodes": episodes,
            "now": now,
        },
    )


def read_names(conn: psycopg.Connection[Any], tenant_id: str, subject: str) -> SubjectNames:
    """The subject's names: the declared display name and aliases (in byte order), and the
    learned ones, oldest first."""
    rows = conn.execute(
        """
        SELECT DISTINCT ON (source, folded) source, name, episode_id, recorded_at
        FROM subject_names WHERE tenant_id = %(tenant_id)s AND subject = %(subject)s
        ORDER BY source, folded, recorded_at
        """,
        {"tenant_id": tenant_id, "subject": subject},
    ).fetchall()
    display = next((str(name) for source, name, _, _ in rows if source == "display"), None)
    return SubjectNames(
        subject=subject,
        display_name=display,
        aliases=sorted(str(name) for source, name, _, _ in rows if source == "alias"),
        learned=[
            LearnedName(name=str(name), episode_id=str(episode), learned_at=at)
            for source, name, episode, at in sorted(rows, key=lambda row: row[3])
            if source == "learned"
        ],
    )


NameRow = tuple[str, str, str, str, str]
"""A name found by key: subject, source, name as kept, kind of key, the key."""


@dataclass(frozen=True)
class AskedKeys:
    """What a question's words may be, by the kind of key each may match."""

    names: Sequence[str] = ()
    """Whole names, a name's first and last word, or its first words."""
    surnames: Sequence[str] = ()
    """A name's last word alone."""
    acronyms: Sequence[str] = ()
    """A name's initials."""


_BY_KEY = """
SELECT subject, source, name, kind, key FROM subject_names
WHERE tenant_id = %(tenant_id)s
  AND (   (kind IN ('full', 'pair', 'leading') AND key = ANY(%(names)s))
       OR (kind = 'surname' AND key = ANY(%(surnames)s))
       OR (kind = 'acronym' AND key = ANY(%(acronyms)s)))
"""


def find_by_keys(conn: psycopg.Connection[Any], tenant_id: str, asked: AskedKeys) -> list[NameRow]:
    """Every name of the tenant a key of its kind finds (plain equality, index-served)."""
    if not (asked.names or asked.surnames or asked.acronyms):
        return []
    rows = conn.execute(
        _BY_KEY,
        {
            "tenant_id": tenant_id,
            "names": sorted(set(asked.names)),
            "surnames": sorted(set(asked.surnames)),
            "acronyms": sorted(set(asked.acronyms)),
        },
    ).fetchall()
    return [(str(s), str(source), str(n), str(kind), str(key)) for s, source, n, kind, key in rows]


SimilarRow = tuple[str, str, str, str, float]
"""A name found by trigram similarity: subject, source, name as kept, the text asked, score."""


def find_similar(
    conn: psycopg.Connection[Any], texts: Sequence[str], *, threshold: float, best: int
) -> list[SimilarRow]:
    """Whole names of the transaction's tenant similar to one of ``texts`` (pg_trgm), at
    least ``threshold`` alike, the ``best`` likest for each text."""
    if not texts:
        return []
    rows = conn.execute(
        "SELECT subject, source, name, asked, score FROM sgam_similar_subject_names("
        "%(texts)s::text[], %(threshold)s::real, %(best)s::integer)",
        {"texts": sorted(set(texts)), "threshold": threshold, "best": best},
    ).fetchall()
    return [(str(s), str(source), str(n), str(a), float(score)) for s, source, n, a, score in rows]


def move_names(
    conn: psycopg.Connection[Any], tenant_id: str, *, merged: str, survivor: str
) -> None:
    """A merged subject's names (its id among them) become the survivor's."""
    params = {"tenant_id": tenant_id, "merged": merged, "survivor": survivor}
    conn.execute(
        """
        INSERT INTO subject_names
            (tenant_id, subject, source, name, folded, kind, key, episode_id, recorded_at)
        SELECT tenant_id, %(survivor)s,
               -- A searched CASE: Citus sends a simple one (CASE source WHEN ...) to the
               -- workers as CASE source WHEN source = 'display', which they refuse.
               CASE WHEN source = 'display' THEN 'alias' ELSE source END,
               name, folded, kind, key, episode_id, recorded_at
        FROM subject_names WHERE tenant_id = %(tenant_id)s AND subject = %(merged)s
        ON CONFLICT DO NOTHING
        """,
        params,
    )
    forget_subjects(conn, tenant_id, [merged])


def forget_subjects(conn: psycopg.Connection[Any], tenant_id: str, subjects: Sequence[str]) -> None:
    """Erase every name of ``subjects``."""
    conn.execute(
        "DELETE FROM subject_names WHERE tenant_id = %(tenant_id)s AND subject = ANY(%(subjects)s)",
        {"tenant_id": tenant_id, "subjects": list(subjects)},
    )


def value_names(
    conn: psycopg.Connection[Any], tenant_id: str, subjects: Sequence[str]
) -> dict[str, set[str]]:
    """The text values each of ``subjects`` ever held, folded as names: a question naming one
    of them names that value ("When did Okafor join the WHO?"), not another subject."""
    rows = conn.execute(
        "SELECT DISTINCT subject, value #>> '{}' FROM fact_versions"
        " WHERE tenant_id = %(tenant_id)s AND subject = ANY(%(subjects)s)"
        " AND jsonb_typeof(value) = 'string'",
        {"tenant_id": tenant_id, "subjects": list(subjects)},
    ).fetchall()
    found: dict[str, set[str]] = {subject: set() for subject in subjects}
    for subject, value in rows:
        found[str(subject)].add(fold_name(str(value)))
    return found
