-- An episode's subjects live only in episode_subjects, one row per (episode, subject).
--
-- Until now each was also in the episode's own array (episodes.subjects), and a candidate
-- about a subject the episode did not name rewrote that array: every write citing one episode
-- (a source document about many customers) queued on the episode's row until the writer
-- before it committed. A candidate now only adds its pair, which locks nothing another
-- writer needs, and every reader (the episode's JSON, export, erasure, purge and legal holds,
-- evidence search) reads the pairs. The store writes a new episode's pairs beside it, so the
-- insert trigger of 0014, which read them from the array, goes with the array.

-- Any subject an array names that lacks its pair gets one before the array goes.
INSERT INTO episode_subjects (tenant_id, subject, episode_id)
SELECT DISTINCT e.tenant_id, s.subject, e.id
FROM episodes AS e, unnest(e.subjects) AS s (subject)
ON CONFLICT DO NOTHING;

DROP TRIGGER episodes_subjects_inserted ON episodes;
DROP FUNCTION sgam_episode_subjects_inserted();
ALTER TABLE episodes DROP COLUMN subjects;
