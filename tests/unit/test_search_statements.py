"""A search's statements are composed once for each shape of scope.

They depend only on which of the scope's fields are set: the values are parameters. Composed
from any scope, a statement must read exactly as the one composed from its shape, which is what
a search is handed; every scope of one shape gets the same statements.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from store.episodes.evidence import SearchScope, _exact_statement, exact_statement, shape_of
from store.episodes.lexical import _fused_statements, fused_statements

MODEL = "all-MiniLM-L6-v2"
INSTANTS = st.none() | st.datetimes(  # hypothesis bounds are naive; the instants are UTC
    min_value=datetime(1990, 1, 1),  # noqa: DTZ001
    max_value=datetime(2040, 1, 1),  # noqa: DTZ001
    timezones=st.just(UTC),
)
WORDS = st.none() | st.text(min_size=1, max_size=12)
SCOPES = st.builds(
    SearchScope,
    subject=WORDS,
    session_id=WORDS,
    occurred_from=INSTANTS,
    occurred_to=INSTANTS,
    known_at=INSTANTS,
)


@settings(max_examples=150, deadline=None)
@given(scope=SCOPES, mode=st.sampled_from(("lexical", "hybrid")))
def test_a_statement_composed_from_a_scope_reads_as_the_one_of_its_shape(
    scope: SearchScope, mode: str
) -> None:
    uncached = _exact_statement.__wrapped__(MODEL, scope)
    assert uncached.as_string(None) == exact_statement(MODEL, scope).as_string(None)
    fresh = _fused_statements.__wrapped__(MODEL, scope, 384, mode)
    cached = fused_statements(MODEL, scope, dimensions=384, mode=mode)  # type: ignore[arg-type]
    assert [s.as_string(None) for s in fresh] == [s.as_string(None) for s in cached]


def test_scopes_of_one_shape_share_their_statements_and_other_shapes_do_not() -> None:
    june = datetime(2026, 6, 2, tzinfo=UTC)
    mira = SearchScope(subject="mira", known_at=june)
    bob = SearchScope(subject="bob", known_at=datetime(2025, 1, 1, tzinfo=UTC))
    assert shape_of(mira) == shape_of(bob)
    assert exact_statement(MODEL, mira) is exact_statement(MODEL, bob)
    assert fused_statements(MODEL, mira, dimensions=384, mode="hybrid") is fused_statements(
        MODEL, bob, dimensions=384, mode="hybrid"
    )
    others = [SearchScope(subject="mira"), SearchScope(known_at=june), SearchScope()]
    texts = {exact_statement(MODEL, scope).as_string(None) for scope in [mira, *others]}
    assert len(texts) == 4
    assert "%(subject)s" in exact_statement(MODEL, mira).as_string(None)
    assert "%(subject)s" not in exact_statement(MODEL, SearchScope()).as_string(None)
