-- Equal-start policies, disputes and episode erasure.

-- Per-attribute override of the source ranks used by source_precedence (NULL = defaults).
ALTER TABLE attributes ADD COLUMN source_ranks jsonb
    CHECK (source_ranks IS NULL OR jsonb_typeof(source_ranks) = 'object');

-- A dispute is an open conflict that marks the key uncertain (equal rank under
-- source_precedence); resolved_fact_id is the fact a chosen challenger became.
ALTER TABLE conflicts ADD COLUMN disputed boolean NOT NULL DEFAULT false;
ALTER TABLE conflicts ADD COLUMN resolved_fact_id uuid;

ALTER TABLE tombstones ADD COLUMN facts_retracted integer NOT NULL DEFAULT 0;
