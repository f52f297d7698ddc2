-- A fact's supporting sources: every episode a weak signal promoted it from (design, section 5:
-- weak signals). Its versions cite one of them, the episode that completed the quorum; the others
-- supported the same value. Erasing one of them retracts the fact only when no other remains:
-- while one does, the fact stays, citing the erased source's content-free stub. Ids only, never
-- a value or a text. A fact written from one episode has no rows here: its source is its only one.

CREATE TABLE fact_sources (
    tenant_id sgam_identifier NOT NULL,
    fact_id uuid NOT NULL,
    episode_id sgam_identifier NOT NULL,
    PRIMARY KEY (tenant_id, fact_id, episode_id),
    FOREIGN KEY (tenant_id, episode_id) REFERENCES episodes (tenant_id, id) ON DELETE CASCADE
);
-- An episode's erasure finds the facts it supports.
CREATE INDEX fact_sources_episode ON fact_sources (tenant_id, episode_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON fact_sources TO sgam_app;

ALTER TABLE fact_sources ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON fact_sources
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));
