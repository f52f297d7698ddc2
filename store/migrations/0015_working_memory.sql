-- Working memory: a thread's checkpoints. Each write adds the next version of the thread (1, 2,
-- ...); none is changed afterwards, so any version reads back as written, after a restart too.
-- The primary key keeps two writers from both writing one version; the store serializes a
-- thread's writers and answers a compare-and-set that lost with 409.

CREATE TABLE thread_checkpoints (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    thread_id sgam_identifier NOT NULL,
    version integer NOT NULL CHECK (version >= 1),
    active_goal_id sgam_identifier,
    pending_dependency sgam_identifier,
    state jsonb NOT NULL CHECK (jsonb_typeof(state) = 'object'),
    written_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, thread_id, version)
);
GRANT SELECT, INSERT, UPDATE, DELETE ON thread_checkpoints TO sgam_app;

ALTER TABLE thread_checkpoints ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON thread_checkpoints
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));
