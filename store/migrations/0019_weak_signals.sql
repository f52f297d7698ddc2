-- Weak signals (design, section 5: immediate and background writes). A candidate marked weak
-- is buffered here, not written: it becomes a fact when enough independent episodes (distinct
-- ids and distinct content hashes) support the same value within the attribute's window, or
-- when a user_confirmation episode does. Each attribute says how many episodes (weak_quorum)
-- and for how long a buffered signal waits (weak_window_days).
ALTER TABLE attributes
    ADD COLUMN weak_quorum integer NOT NULL DEFAULT 2 CHECK (weak_quorum BETWEEN 1 AND 100),
    ADD COLUMN weak_window_days integer NOT NULL DEFAULT 30
        CHECK (weak_window_days BETWEEN 1 AND 3650);

-- One row per (key, value, episode) waiting for support. A promoted signal's rows go (its
-- fact then cites the episode that completed the quorum); expired rows never count and are
-- dropped by the next weak write to their key. Deleting an episode takes its signals along
-- (the foreign key); erasure also deletes those of an episode it reduces to a stub, and those
-- of an erased subject.
CREATE TABLE weak_signals (
    tenant_id sgam_identifier NOT NULL,
    signal_id uuid NOT NULL,
    subject sgam_identifier NOT NULL,
    attribute sgam_identifier NOT NULL,
    value jsonb NOT NULL,
    episode_id sgam_identifier NOT NULL,
    content_hash text NOT NULL,
    evidence text,
    evidence_verified boolean NOT NULL,
    valid_from timestamptz NOT NULL,
    buffered_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, signal_id),
    FOREIGN KEY (tenant_id, attribute) REFERENCES attributes (tenant_id, attribute),
    FOREIGN KEY (tenant_id, episode_id) REFERENCES episodes (tenant_id, id) ON DELETE CASCADE,
    CHECK (expires_at > buffered_at)
);
-- The quorum's lookup (and a subject's erasure), an episode's erasure, and the listing.
CREATE INDEX weak_signals_key ON weak_signals (tenant_id, subject, attribute);
CREATE INDEX weak_signals_episode ON weak_signals (tenant_id, episode_id);
CREATE INDEX weak_signals_buffered ON weak_signals (tenant_id, buffered_at, signal_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON weak_signals TO sgam_app;

ALTER TABLE weak_signals ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON weak_signals
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));
