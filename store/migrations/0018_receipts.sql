-- Receipts (design, section 6): the content-free trace of every write, and of every read made
-- for a decision. A decision is opened by a context call, or by the first read that names it
-- (X-SGAM-Decision); its receipts say which memory was read, in which scope, how old it was,
-- where it came from, whether it reached the answer and whether it was still valid. Only ids,
-- hashes, times, enums and booleans: what the memory says is never copied here. Keys and scopes
-- are hashes (store/receipt_models.py), so the memory health classifier compares them without
-- the names themselves being stored.

-- A thread can be erased too (its checkpoints and their receipts): its tombstone counts them.
ALTER TABLE tombstones DROP CONSTRAINT tombstones_target_check;
ALTER TABLE tombstones ADD CONSTRAINT tombstones_target_check
    CHECK (target IN ('subject', 'episode', 'thread'));
ALTER TABLE tombstones ADD COLUMN checkpoints_deleted integer NOT NULL DEFAULT 0
    CHECK (checkpoints_deleted >= 0);

CREATE TABLE decisions (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    decision_id uuid NOT NULL,
    opened_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, decision_id)
);
-- Retention finds old decisions by when they were opened.
CREATE INDEX decisions_opened ON decisions (tenant_id, opened_at);

CREATE TABLE receipts (
    tenant_id sgam_identifier NOT NULL,
    receipt_id uuid NOT NULL,
    decision_id uuid,
    action text NOT NULL CHECK (action IN ('read', 'write')),
    memory_type text NOT NULL
        CHECK (memory_type IN ('working', 'semantic', 'episodic', 'procedural')),
    memory_key text NOT NULL,
    -- What the receipt is erased with (a subject, thread or procedure; an episode's own id),
    -- hashed, without the caller's scope string: erasure finds receipts by it.
    owner_key text NOT NULL,
    version text,
    expected_scope_hash text NOT NULL,
    observed_scope_hash text NOT NULL,
    written_at timestamptz,
    read_at timestamptz,
    freshness_budget_s bigint CHECK (freshness_budget_s >= 0),
    provenance text,
    activated boolean NOT NULL,
    invalidation text CHECK (invalidation IN ('current', 'superseded')),
    outcome text CHECK (outcome IN ('succeeded', 'failed', 'partial', 'unknown')),
    approved boolean,
    recorded_at timestamptz NOT NULL,
    -- decision_id names a row of decisions, which the store writes first; no foreign key, so a
    -- read's receipts cost no per-row check (retention and erasure delete both themselves).
    PRIMARY KEY (tenant_id, receipt_id),
    -- A read has a read time and a decision; a write has no read time.
    CONSTRAINT receipts_read_shape CHECK (
        (action = 'read') = (read_at IS NOT NULL)
        AND (action = 'write' OR decision_id IS NOT NULL)
    )
);
-- A decision's receipts; a write made for no decision costs this index nothing.
CREATE INDEX receipts_decision ON receipts (tenant_id, decision_id, recorded_at)
    WHERE decision_id IS NOT NULL;
-- The classifier's "written" layer looks a memory's writes up by type and key.
CREATE INDEX receipts_writes ON receipts (tenant_id, memory_type, memory_key)
    WHERE action = 'write';
CREATE INDEX receipts_owner ON receipts (tenant_id, owner_key);
-- Erasing an episode takes the receipts of the facts it sourced.
CREATE INDEX receipts_provenance ON receipts (tenant_id, provenance)
    WHERE memory_type = 'semantic';
-- Retention deletes by age; receipts arrive in time order, so a block range index serves it
-- at almost no cost to each insert.
CREATE INDEX receipts_recorded ON receipts USING brin (recorded_at);

GRANT SELECT, INSERT, DELETE ON decisions, receipts TO sgam_app;

ALTER TABLE decisions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON decisions
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));
ALTER TABLE receipts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON receipts
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));
