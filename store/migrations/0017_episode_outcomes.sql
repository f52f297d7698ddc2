-- Episodic memory's outcomes: what came of an episode (design, section 6). An episode holds at
-- most one current outcome; a later one supersedes it, and the superseded rows stay as the
-- episode's outcome history (`revision` counts them from 1). Outcomes hold no content: a
-- status, flags and an optional receipt id. Deleting an episode takes its outcomes along (the
-- foreign key); erasure also deletes those of an episode it reduces to a stub.
CREATE TABLE episode_outcomes (
    tenant_id sgam_identifier NOT NULL,
    episode_id sgam_identifier NOT NULL,
    revision integer NOT NULL CHECK (revision >= 1),
    status text NOT NULL CHECK (status IN ('succeeded', 'failed', 'partial', 'unknown')),
    outcome_receipt_id sgam_identifier,
    verified boolean NOT NULL,
    human_intervened boolean NOT NULL,
    budget_exhausted boolean NOT NULL,
    recorded_at timestamptz NOT NULL,
    superseded_at timestamptz,
    PRIMARY KEY (tenant_id, episode_id, revision),
    FOREIGN KEY (tenant_id, episode_id) REFERENCES episodes (tenant_id, id) ON DELETE CASCADE,
    CHECK (superseded_at IS NULL OR superseded_at >= recorded_at)
);
-- One current outcome per episode, and the lookup an experience search makes.
CREATE UNIQUE INDEX episode_outcomes_current
    ON episode_outcomes (tenant_id, episode_id) WHERE superseded_at IS NULL;
GRANT SELECT, INSERT, UPDATE, DELETE ON episode_outcomes TO sgam_app;

ALTER TABLE episode_outcomes ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON episode_outcomes
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));
