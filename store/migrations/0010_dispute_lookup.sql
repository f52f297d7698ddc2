-- A fact's disputes are read in the same statement as the fact (store/reads.py): conflicts
-- are found by the incumbent they challenge, open or resolved, without scanning the tenant's.
CREATE INDEX conflicts_incumbent ON conflicts (tenant_id, incumbent_fact_id);
