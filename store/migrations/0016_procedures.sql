-- Procedural memory: named procedures, each a series of versions (1, 2, ...). A version is
-- written as a draft, approved once (by whom, under which policy, with which evaluation), and
-- then may be activated in a scope. Only an approved version can be active, and one version is
-- active per (procedure, scope).
--
-- A scope's activations form a stack: each activation of another version pushes it, a rollback
-- pops the top. The top is the active version and the entry below it its rollback target.
-- The keys keep the stack one unbroken column: one entry per depth, and each entry above the
-- first names the entry below it, so a stack has exactly one top. Each entry names its
-- version together with that version's approved_at, which only an approved version has.

CREATE TABLE procedures (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    name sgam_identifier NOT NULL,
    latest_version integer NOT NULL CHECK (latest_version >= 1),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, name)
);

CREATE TABLE procedure_versions (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    name sgam_identifier NOT NULL,
    version integer NOT NULL,
    steps text,
    definition jsonb,
    created_at timestamptz NOT NULL,
    approver sgam_identifier,
    policy sgam_identifier,
    evaluation_ref sgam_identifier,
    approved_at timestamptz,
    PRIMARY KEY (tenant_id, name, version),
    -- What an activation names: a draft has no approved_at, so no activation can name it.
    CONSTRAINT procedure_versions_approved UNIQUE (tenant_id, name, version, approved_at),
    FOREIGN KEY (tenant_id, name) REFERENCES procedures (tenant_id, name),
    CONSTRAINT procedure_versions_numbered CHECK (version >= 1),
    CONSTRAINT procedure_versions_body CHECK (steps IS NOT NULL OR definition IS NOT NULL),
    CONSTRAINT procedure_versions_steps_length CHECK (char_length(steps) BETWEEN 1 AND 100000),
    CONSTRAINT procedure_versions_definition_object
        CHECK (jsonb_typeof(definition) = 'object'),
    CONSTRAINT procedure_versions_approval CHECK (
        (approved_at IS NULL AND approver IS NULL AND policy IS NULL AND evaluation_ref IS NULL)
        OR (approved_at >= created_at AND approver IS NOT NULL AND policy IS NOT NULL)
    )
);

CREATE TABLE procedure_activations (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    name sgam_identifier NOT NULL,
    scope sgam_identifier NOT NULL,
    depth integer NOT NULL,
    version integer NOT NULL,
    approved_at timestamptz NOT NULL,
    activated_at timestamptz NOT NULL,
    below integer GENERATED ALWAYS AS (NULLIF(depth - 1, 0)) STORED,
    PRIMARY KEY (tenant_id, name, scope, depth),
    CONSTRAINT procedure_activations_depth CHECK (depth >= 1),
    FOREIGN KEY (tenant_id, name, version, approved_at)
        REFERENCES procedure_versions (tenant_id, name, version, approved_at),
    FOREIGN KEY (tenant_id, name, scope, below)
        REFERENCES procedure_activations (tenant_id, name, scope, depth)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON procedures, procedure_versions, procedure_activations
    TO sgam_app;

ALTER TABLE procedures ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON procedures
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));

ALTER TABLE procedure_versions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON procedure_versions
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));

ALTER TABLE procedure_activations ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON procedure_activations
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));
