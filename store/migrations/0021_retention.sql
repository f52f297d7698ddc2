-- Memory that ends (design, section 3: "only an explicit erasure or a retention purge
-- deletes"). Episodes and attributes already name a retention class; this migration lets a
-- tenant declare the classes, keeps the stubs a purge leaves, and places legal holds.
--
-- A class keeps what it covers for `keep_days` (null: for ever), counted from an episode's
-- `recorded_at` or, with `counts_from = 'session_end'`, from the last episode of its session.
-- The four classes every tenant has (ephemeral, session, standard, permanent) live in the code
-- (store/retention.py); a row here declares a new class or overrides one of them.
CREATE TABLE retention_classes (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    name sgam_identifier NOT NULL,
    keep_days integer CHECK (keep_days BETWEEN 0 AND 36500),
    counts_from text NOT NULL CHECK (counts_from IN ('recorded', 'session_end')),
    declared_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, name)
);
GRANT SELECT, INSERT, UPDATE, DELETE ON retention_classes TO sgam_app;

ALTER TABLE retention_classes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON retention_classes
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));

-- A subject under legal hold: the purge skips everything linked to it, and erasing it (or an
-- episode linked to it) is refused until the hold is released (the row deleted).
CREATE TABLE legal_holds (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    subject sgam_identifier NOT NULL,
    placed_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, subject)
);
GRANT SELECT, INSERT, UPDATE, DELETE ON legal_holds TO sgam_app;

ALTER TABLE legal_holds ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON legal_holds
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));

-- A purged episode that a remaining row still cites stays as a stub, as an erased one does:
-- id, kind, times and content hash, with `purged_at` saying why its text is gone.
ALTER TABLE episodes ADD COLUMN purged_at timestamptz;
ALTER TABLE episodes DROP CONSTRAINT episodes_stub_has_no_text;
ALTER TABLE episodes ADD CONSTRAINT episodes_stub_has_no_text
    CHECK ((erased_at IS NULL AND purged_at IS NULL) = (text IS NOT NULL));
-- The purge finds a class's episodes by age, and a session's last episode.
CREATE INDEX episodes_retention ON episodes (tenant_id, retention_class, recorded_at)
    WHERE text IS NOT NULL;
CREATE INDEX episodes_session ON episodes (tenant_id, session_id, recorded_at)
    WHERE session_id IS NOT NULL;

-- A fact whose every version was purged: its id, still named by other versions' `supersedes`
-- and `ended_by`, resolves to "existed, purged". Ids and a time only.
CREATE TABLE purged_facts (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    fact_id uuid NOT NULL,
    purged_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, fact_id)
);
GRANT SELECT, INSERT, UPDATE, DELETE ON purged_facts TO sgam_app;

ALTER TABLE purged_facts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON purged_facts
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));

-- A purge leaves a tombstone too: what went, counted, never what it held.
ALTER TABLE tombstones DROP CONSTRAINT tombstones_target_check;
ALTER TABLE tombstones ADD CONSTRAINT tombstones_target_check
    CHECK (target IN ('subject', 'episode', 'thread', 'purge'));
ALTER TABLE tombstones
    ADD COLUMN vectors_deleted integer NOT NULL DEFAULT 0 CHECK (vectors_deleted >= 0),
    ADD COLUMN receipts_deleted integer NOT NULL DEFAULT 0 CHECK (receipts_deleted >= 0),
    ADD COLUMN weak_signals_deleted integer NOT NULL DEFAULT 0
        CHECK (weak_signals_deleted >= 0),
    ADD COLUMN extraction_jobs_deleted integer NOT NULL DEFAULT 0
        CHECK (extraction_jobs_deleted >= 0);

-- The purge serves every tenant, one at a time, each in a transaction of its own tenant:
-- which tenants there are is this owner-defined function's one answer.
CREATE FUNCTION sgam_tenant_ids() RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT t.tenant_id::text FROM public.tenants AS t ORDER BY t.tenant_id
$$;
REVOKE ALL ON FUNCTION sgam_tenant_ids() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sgam_tenant_ids() TO sgam_app;
