-- Extraction on request (design, section 5: immediate and background writes). An episode
-- recorded with `extract` other than `none` gets one job here; a worker leases due jobs, sends
-- the episode to the configured extractor and writes its candidates down the normal write path.
-- A job holds no content: its state, its attempts, the last error (a class of failure, never
-- text of the episode or of the model's answer) and each candidate's result status and reason.
--
-- status: `queued` (never tried, or requeued), `failed` (an attempt failed, another is due at
-- `run_after`), `done`, `dead` (attempts spent; `POST /v1/episodes/{id}/extraction/retry`
-- requeues it). A worker holding a job sets `lease_id` and `leased_until`; a lease past its end
-- (a worker killed mid-job) lets the job be claimed again, and only the holder of the current
-- lease may finish it, so no job is written twice.
CREATE TABLE extraction_jobs (
    tenant_id sgam_identifier NOT NULL,
    episode_id sgam_identifier NOT NULL,
    status text NOT NULL CHECK (status IN ('queued', 'failed', 'done', 'dead')),
    prompt_version text NOT NULL,
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    queued_at timestamptz NOT NULL,
    run_after timestamptz NOT NULL,
    lease_id uuid,
    leased_until timestamptz,
    last_error text,
    results jsonb,
    finished_at timestamptz,
    PRIMARY KEY (tenant_id, episode_id),
    FOREIGN KEY (tenant_id, episode_id) REFERENCES episodes (tenant_id, id) ON DELETE CASCADE,
    CONSTRAINT extraction_jobs_lease CHECK ((lease_id IS NULL) = (leased_until IS NULL))
);
-- The jobs a worker may take, oldest due first (and the queue's age, a metric).
CREATE INDEX extraction_jobs_due
    ON extraction_jobs (run_after) WHERE status IN ('queued', 'failed');
GRANT SELECT, INSERT, UPDATE, DELETE ON extraction_jobs TO sgam_app;

ALTER TABLE extraction_jobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON extraction_jobs
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));

-- A worker serves every tenant, and sees none of them until it names one: claiming due jobs
-- across tenants is this owner-defined function's job. It leases at most `wanted` due jobs
-- (skipping those another worker is claiming), counts the attempt and returns which they are;
-- each is then worked in a transaction of its own tenant.
CREATE FUNCTION sgam_claim_extractions(wanted integer, at timestamptz, lease interval)
RETURNS TABLE (tenant_id text, episode_id text, lease_id uuid)
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    WITH due AS (
        SELECT j.tenant_id, j.episode_id FROM public.extraction_jobs AS j
        WHERE j.status IN ('queued', 'failed') AND j.run_after <= at
          AND (j.leased_until IS NULL OR j.leased_until <= at)
        ORDER BY j.run_after, j.tenant_id, j.episode_id
        LIMIT greatest(wanted, 0)
        FOR UPDATE SKIP LOCKED
    )
    UPDATE public.extraction_jobs AS j
    SET lease_id = gen_random_uuid(), leased_until = at + lease, attempts = j.attempts + 1
    FROM due WHERE j.tenant_id = due.tenant_id AND j.episode_id = due.episode_id
    RETURNING j.tenant_id::text, j.episode_id::text, j.lease_id
$$;

-- The freshness lag: seconds since the oldest job still waiting was queued (0 when none).
CREATE FUNCTION sgam_extraction_lag(at timestamptz) RETURNS double precision
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT coalesce(greatest(extract(epoch FROM at - min(j.queued_at)), 0), 0)::double precision
    FROM public.extraction_jobs AS j WHERE j.status IN ('queued', 'failed')
$$;

REVOKE ALL ON FUNCTION sgam_claim_extractions(integer, timestamptz, interval),
    sgam_extraction_lag(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sgam_claim_extractions(integer, timestamptz, interval),
    sgam_extraction_lag(timestamptz) TO sgam_app;
