-- The schema as Citus can distribute it (store/db/distribution.py), the same on one node.
--
-- Citus distributes no table with triggers. The code that changes a key announces the change
-- itself (store/governance/keys.py), in the same transaction, on the same channel and with the
-- same payload as the triggers of 0008: PostgreSQL still sends it only if that transaction
-- commits, in commit order, and sends a payload given twice in one transaction once. On one
-- node the triggers stay, so a key changed by hand in SQL is announced too; on Citus
-- `sgam migrate` drops them as it places api_keys (store/db/distribution.py), and keys change
-- through sgam only.

-- API keys are a reference table on Citus (their key_id is unique across tenants, which a
-- distributed table cannot promise), and a reference table may not reference the distributed
-- tenants. Issuing a key checks its tenant in the same transaction (store/governance/keys.py,
-- require_tenant), and no tenant is ever deleted.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_tenant_id_fkey;

-- Citus prunes shards on a distribution column of a domain type wrongly: a statement naming one
-- tenant by `tenant_id = ...` went to every shard, or with the fast-path planner to none. So
-- tenant_id becomes plain text in every table, each checked by the sgam_identifier domain's own
-- rule as before (the cast applies the domain's check; the constraint is the column's
-- `<table>_tenant_id_check`). Policies name the column, so the tenant wall is dropped around
-- the change and made again as it was.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN
        SELECT c.relname FROM pg_attribute AS a JOIN pg_class AS c ON c.oid = a.attrelid
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
          AND a.attname = 'tenant_id' AND a.atttypid = 'sgam_identifier'::regtype
        ORDER BY c.relname
    LOOP
        EXECUTE format('DROP POLICY IF EXISTS tenant_wall ON %I', t);
        EXECUTE format('ALTER TABLE %I ALTER COLUMN tenant_id TYPE text', t);
        EXECUTE format(
            'ALTER TABLE %I ADD CONSTRAINT %I CHECK ((tenant_id::sgam_identifier) IS NOT NULL)',
            t, t || '_tenant_id_check');
        EXECUTE format(
            'CREATE POLICY tenant_wall ON %I'
            ' USING (tenant_id = current_setting(''sgam.tenant_id'', true))'
            ' WITH CHECK (tenant_id = current_setting(''sgam.tenant_id'', true))', t);
    END LOOP;
END
$$;

-- Citus runs no statement that locks rows of several shards (FOR UPDATE SKIP LOCKED across
-- tenants). The claim now picks the due jobs first, then leases each with a statement of its
-- one tenant that checks again that it is still due and unleased: a job another worker leased
-- meanwhile is passed over (after that worker's commit, instead of skipped at once), so a job
-- is still leased to one worker at a time. Fewer than `wanted` may come back.
CREATE OR REPLACE FUNCTION sgam_claim_extractions(wanted integer, at timestamptz, lease interval)
RETURNS TABLE (tenant_id text, episode_id text, lease_id uuid)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
#variable_conflict use_column
DECLARE
    due record;
BEGIN
    FOR due IN
        SELECT j.tenant_id, j.episode_id FROM public.extraction_jobs AS j
        WHERE j.status IN ('queued', 'failed') AND j.run_after <= at
          AND (j.leased_until IS NULL OR j.leased_until <= at)
        ORDER BY j.run_after, j.tenant_id, j.episode_id
        LIMIT greatest(wanted, 0)
    LOOP
        RETURN QUERY
        UPDATE public.extraction_jobs AS j
        SET lease_id = gen_random_uuid(), leased_until = at + lease, attempts = j.attempts + 1
        WHERE j.tenant_id = due.tenant_id AND j.episode_id = due.episode_id
          AND j.status IN ('queued', 'failed') AND j.run_after <= at
          AND (j.leased_until IS NULL OR j.leased_until <= at)
        RETURNING j.tenant_id::text, j.episode_id::text, j.lease_id;
    END LOOP;
END
$$;

-- On Citus the workers do not see the coordinator's set_config of the similarity threshold and
-- keep pg_trgm's default (0.3): the threshold asked is checked again where it is the same on
-- every node. (The index still answers `%`, at the default or the setting, whichever the node
-- has: thresholds the store asks, 0.4, are above the default.)
CREATE OR REPLACE FUNCTION sgam_similar_subject_names(texts text[], threshold real, best integer)
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
          AND similarity(n.folded, t.asked) >= threshold
    ) AS ranked
    WHERE ranked.rank <= best;
END
$$;
