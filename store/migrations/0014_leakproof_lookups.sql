-- Lookups an index can serve under row-level security (0012).
--
-- Where a policy applies, PostgreSQL lets an index serve a query's condition only if the
-- condition's functions are leakproof (they cannot reveal a row the policy hides through an
-- error). Text and timestamp comparisons are; lower() and array containment (@>) are not, so
-- the two lookups built on them fell back to reading every row of the tenant:
--
-- * planning a question folds subject names with lower() (0009's index): the folded name is
--   now a stored column, compared with plain equality;
-- * an evidence search scoped to a subject tested `subjects @> ARRAY[...]` against the GIN
--   index: each (episode, subject) pair is now also a row of episode_subjects, read by
--   equality. The trigger below adds the pairs of new episodes; the store adds those of a
--   candidate naming another subject, and erasure removes them, beside each change to
--   episodes.subjects (a trigger on that hot row's update would hold its lock longer).

ALTER TABLE fact_versions
    ADD COLUMN subject_folded text GENERATED ALWAYS AS (lower(subject)) STORED;
DROP INDEX fact_versions_subject_folded;
CREATE INDEX fact_versions_subject_folded
    ON fact_versions (tenant_id, subject_folded, subject);

CREATE TABLE episode_subjects (
    tenant_id sgam_identifier NOT NULL,
    subject text NOT NULL,
    episode_id sgam_identifier NOT NULL,
    PRIMARY KEY (tenant_id, subject, episode_id),
    FOREIGN KEY (tenant_id, episode_id) REFERENCES episodes (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX episode_subjects_episode ON episode_subjects (tenant_id, episode_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON episode_subjects TO sgam_app;

ALTER TABLE episode_subjects ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON episode_subjects
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));

INSERT INTO episode_subjects (tenant_id, subject, episode_id)
SELECT DISTINCT e.tenant_id, s.subject, e.id
FROM episodes AS e, unnest(e.subjects) AS s (subject);

-- A statement trigger with a transition table: a COPY-fed insert of thousands of episodes adds
-- their pairs in one statement. It runs as the writer, so the pairs pass the same policy.
CREATE FUNCTION sgam_episode_subjects_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO episode_subjects (tenant_id, subject, episode_id)
    SELECT DISTINCT n.tenant_id, s.subject, n.id
    FROM new_episodes AS n, unnest(n.subjects) AS s (subject)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER episodes_subjects_inserted AFTER INSERT ON episodes
    REFERENCING NEW TABLE AS new_episodes
    FOR EACH STATEMENT EXECUTE FUNCTION sgam_episode_subjects_inserted();
