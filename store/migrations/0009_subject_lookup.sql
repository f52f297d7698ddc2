-- Planning a question looks up which of its words name a subject the tenant holds facts on,
-- compared case-insensitively (store/reads.py find_subjects). Without an index on the folded
-- name that lookup scanned every version of the tenant on every context read: measured by
-- `sgam bench`, a context with the attribute named took 15 ms at 10k fact versions and 375 ms
-- at 1M. With it, the lookup reads only the named subjects' index entries.
CREATE INDEX fact_versions_subject_folded ON fact_versions (tenant_id, lower(subject), subject);
