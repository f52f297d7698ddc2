"""A context request naming attributes by the names they had before a rename."""

from __future__ import annotations

from store.contract.reads import ContextRequest, RenamedAttribute
from store.db.snapshot import ReadSnapshot


def read_old_names_as_new(
    snapshot: ReadSnapshot, request: ContextRequest
) -> tuple[ContextRequest, list[RenamedAttribute], str | None]:
    """The request with each old name still in its dual-read window replaced by the new one,
    each new name read that way with its old name (none when none was), and the subject the
    request names as it stands now (a merged id's survivor; None when it names none).

    A request naming both attributes and a subject asks for both in one statement.
    """
    if not request.attributes:
        subject = snapshot.resolve_subject(request.subject) if request.subject else None
        return request, [], subject
    if request.subject:
        renamed, subject = snapshot.renames_and_survivor(request.attributes, request.subject)
    else:
        renamed, subject = snapshot.renamed_targets(request.attributes), None
    if not renamed:
        return request, [], subject
    named = [renamed.get(name, name) for name in request.attributes]
    return (
        request.model_copy(update={"attributes": named}),
        [RenamedAttribute(attribute=new, migrated_from=old) for old, new in renamed.items()],
        subject,
    )
