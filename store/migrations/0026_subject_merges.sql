-- Subject merges: a duplicate subject folded into another. Its facts, conflicts and episode links
-- move to the survivor, and its id resolves to the survivor from then on. Each row is the merge's
-- content-free receipt: the two ids, when, and counts of what moved; never a value or a text.
-- A chain (A into B, then B into C) is kept flat: every row names the final survivor, so one
-- lookup resolves any merged id. Erasing the survivor, or any id merged into it, deletes the rows.

CREATE TABLE subject_merges (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    merge_id uuid NOT NULL,
    merged_subject sgam_identifier NOT NULL,
    survivor sgam_identifier NOT NULL,
    merged_at timestamptz NOT NULL,
    versions_moved integer NOT NULL CHECK (versions_moved >= 0),
    conflicts_moved integer NOT NULL CHECK (conflicts_moved >= 0),
    episodes_linked integer NOT NULL CHECK (episodes_linked >= 0),
    PRIMARY KEY (tenant_id, merge_id),
    -- A subject is merged once: afterwards its id names the survivor.
    CONSTRAINT subject_merges_once UNIQUE (tenant_id, merged_subject),
    CONSTRAINT subject_merges_not_itself CHECK (merged_subject <> survivor)
);
-- Erasure and chains find every id merged into a survivor.
CREATE INDEX subject_merges_survivor ON subject_merges (tenant_id, survivor);
GRANT SELECT, INSERT, UPDATE, DELETE ON subject_merges TO sgam_app;

ALTER TABLE subject_merges ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON subject_merges
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));
