"""A context request naming attributes by the names they had before a rename."""

from __future__ import annotations

from store.contract.reads import ContextRequest, RenamedAttribute
from store.db.snapshot import ReadSnapshot


def read_old_names_as_new(
    snapshot: ReadSnapshot, request: ContextRequest
) -> tuple[ContextRequest, list[RenamedAttribute]]:
    """The request with each old name still in its dual-read window replaced by the new one,
    and each new name read that way with its old name (none when none was)."""
    if not request.attributes:
        return request, []
    renamed = snapshot.renamed_targets(request.attributes)
    if not renamed:
        return request, []
    named = [renamed.get(name, name) for name in request.attributes]
    return (
        request.model_copy(update={"attributes": named}),
        [RenamedAttribute(attribute=new, migrated_from=old) for old, new in renamed.items()],
    )
