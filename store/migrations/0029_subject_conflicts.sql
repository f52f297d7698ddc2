-- A subject's conflicts, open or resolved, are read on every context read with history and by
-- its export (store/facts/conflicts.py, subject_conflicts). Only open ones had an index on the
-- subject (conflicts_open): the resolved ones were found by reading every conflict of the
-- tenant. This index starts the read from the subject's own rows.
CREATE INDEX conflicts_subject ON conflicts (tenant_id, subject);
