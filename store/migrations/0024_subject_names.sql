-- Subject names: how people and text write a subject, so a question can find it by name.
--
-- Each row is one name of a subject and one key it can be looked up by. A name comes from:
--   id        the subject's own id, its separators read as spaces (kept for every subject that
--             holds a fact or that an episode names);
--   display   the display name declared with PUT /v1/subjects/{subject};
--   alias     another declared name;
--   learned   a name a candidate's subject_name, or an episode's subject_names, wrote; the row
--             cites that episode, and erasing or purging the episode takes the name with it.
-- Names are stored folded (case, diacritics and punctuation, store/names.py) and keyed by
-- sgam_name_keys below: the whole name, first and last word, its first words (two or more),
-- the last word alone and the initials. A question's words are looked up by plain equality
-- on (tenant_id, kind, key), which row-level security lets an index serve (0014); near
-- spellings by trigram similarity on whole names, through sgam_similar_subject_names.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Words left out of an acronym: "World Health Organization" is WHO, "Bank of England" BE.
CREATE FUNCTION sgam_name_keys(folded text) RETURNS TABLE (kind text, key text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    WITH parts AS (
        SELECT array_agg(word ORDER BY n) FILTER (WHERE length(word) > 1) AS words,
               string_agg(left(word, 1), '' ORDER BY n) FILTER (
                   WHERE word <> ALL (ARRAY['a', 'an', 'the', 'of', 'and', 'for', 'in', 'on',
                                            'at', 'to', 'de', 'du', 'des', 'la', 'le', 'von',
                                            'van', 'der', 'den', 'og', 'i', 'y', 'et'])
               ) AS initials,
               count(*) AS n_words
        FROM unnest(string_to_array(folded, ' ')) WITH ORDINALITY AS t (word, n)
        WHERE word <> ''
    )
    SELECT 'full', folded WHERE folded <> ''
    UNION ALL
    SELECT 'pair', words[1] || ' ' || words[cardinality(words)] FROM parts
    WHERE cardinality(words) >= 2 AND n_words >= 3
    UNION ALL
    SELECT 'surname', words[cardinality(words)] FROM parts
    WHERE cardinality(words) >= 2 AND length(words[cardinality(words)]) >= 3
    UNION ALL
    SELECT 'acronym', initials FROM parts WHERE n_words >= 2 AND length(initials) >= 2
    UNION ALL
    SELECT 'leading', array_to_string(words[1:k], ' ')
    FROM parts, generate_series(2, cardinality(words) - 1) AS k
    WHERE cardinality(words) >= 3 AND n_words = cardinality(words)
$$;

-- An id folded as a name: ids are ASCII, so folding is lower case with separators as spaces.
CREATE FUNCTION sgam_fold_id(subject text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT btrim(regexp_replace(lower(subject), '[^a-z0-9]+', ' ', 'g'))
$$;

CREATE TABLE subject_names (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    subject sgam_identifier NOT NULL,
    source text NOT NULL CHECK (source IN ('id', 'display', 'alias', 'learned')),
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    folded text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('full', 'pair', 'leading', 'surname', 'acronym')),
    key text NOT NULL,
    episode_id sgam_identifier,
    recorded_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, subject, source, folded, kind),
    CONSTRAINT subject_names_learned_cite CHECK ((source = 'learned') = (episode_id IS NOT NULL)),
    FOREIGN KEY (tenant_id, episode_id) REFERENCES episodes (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX subject_names_key ON subject_names (tenant_id, kind, key);
CREATE INDEX subject_names_episode ON subject_names (tenant_id, episode_id)
    WHERE episode_id IS NOT NULL;
CREATE INDEX subject_names_similar ON subject_names USING gin (folded gin_trgm_ops)
    WHERE kind = 'full';
GRANT SELECT, INSERT, UPDATE, DELETE ON subject_names TO sgam_app;

ALTER TABLE subject_names ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON subject_names
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));

-- Trigram similarity is not leakproof, so under the policy no index could serve it and every
-- name of the tenant would be compared. This function runs as the table's owner and filters
-- the tenant itself, from the same setting the policy reads (never from an argument). The
-- index answers at the threshold given (pg_trgm's setting, for this transaction only), and
-- each text asked keeps its `best` likest names.
CREATE FUNCTION sgam_similar_subject_names(texts text[], threshold real, best integer)
RETURNS TABLE (subject text, source text, name text, asked text, score real)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
BEGIN
    PERFORM set_config('pg_trgm.similarity_threshold', threshold::text, true);
    RETURN QUERY
    SELECT ranked.subject, ranked.source, ranked.name, ranked.asked, ranked.score
    FROM (
        SELECT n.subject::text, n.source, n.name, t.asked,
               similarity(n.folded, t.asked) AS score,
               row_number() OVER (PARTITION BY t.asked
                                  ORDER BY similarity(n.folded, t.asked) DESC, n.subject) AS rank
        FROM unnest(texts) AS t (asked)
        JOIN subject_names AS n ON n.folded % t.asked
        WHERE n.kind = 'full'
          AND n.tenant_id = current_setting('sgam.tenant_id', true)
    ) AS ranked
    WHERE ranked.rank <= best;
END
$$;
REVOKE ALL ON FUNCTION sgam_similar_subject_names(text[], real, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sgam_similar_subject_names(text[], real, integer) TO sgam_app;

-- Every subject held so far is found by its id's words.
INSERT INTO subject_names (tenant_id, subject, source, name, folded, kind, key, recorded_at)
SELECT held.tenant_id, held.subject, 'id', held.subject, sgam_fold_id(held.subject), k.kind,
       k.key, now()
FROM (
    SELECT DISTINCT tenant_id, subject FROM fact_versions
    UNION
    SELECT tenant_id, subject FROM episode_subjects
) AS held
CROSS JOIN LATERAL sgam_name_keys(sgam_fold_id(held.subject)) AS k
ON CONFLICT DO NOTHING;
