-- Sessions of the timeline pages (/ui). Someone signs in by posting a tenant's API key once; the
-- browser then holds only a random session id in a cookie, never the key. Every server process
-- answers any session, so sessions live here rather than in one process's memory.
--
-- A row keeps only SHA-256 digests: of the session id (32 random bytes, so a leaked digest gives
-- nothing to guess from, as for API keys in 0006) and of the session's CSRF token. It names the
-- key the session was opened with: a revoked key ends its sessions at once, because the lookup
-- below checks the key with sgam_active_key, the function every API key check goes through.

-- A session names a key of its own tenant only (the foreign key below).
ALTER TABLE api_keys ADD CONSTRAINT api_keys_tenant_key UNIQUE (tenant_id, key_id);

CREATE TABLE ui_sessions (
    tenant_id sgam_identifier NOT NULL,
    session_hash bytea NOT NULL CHECK (octet_length(session_hash) = 32),
    key_id uuid NOT NULL,
    csrf_hash bytea NOT NULL CHECK (octet_length(csrf_hash) = 32),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, session_hash),
    FOREIGN KEY (tenant_id, key_id) REFERENCES api_keys (tenant_id, key_id) ON DELETE CASCADE,
    CONSTRAINT ui_sessions_expire_after_created CHECK (expires_at > created_at)
);
-- A request finds its session by the digest alone, before any tenant is known (the function
-- below); not unique across tenants, so that the table can be sharded by tenant_id.
CREATE INDEX ui_sessions_session ON ui_sessions (session_hash);
-- Signing in deletes the tenant's expired sessions.
CREATE INDEX ui_sessions_expiry ON ui_sessions (tenant_id, expires_at);
GRANT SELECT, INSERT, UPDATE, DELETE ON ui_sessions TO sgam_app;

ALTER TABLE ui_sessions ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON ui_sessions
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));

-- A page request learns its tenant from its session, so finding the session cannot wait for a
-- tenant: like an API key's lookup (0012), this owner-defined function answers that one
-- question. It answers only a live session whose key is still active for the same tenant.
CREATE FUNCTION sgam_ui_session(wanted bytea, at timestamptz)
RETURNS TABLE (tenant_id text, key_id uuid, csrf_hash bytea, expires_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT s.tenant_id::text, s.key_id, s.csrf_hash, s.expires_at
    FROM public.ui_sessions AS s, public.sgam_active_key(s.key_id) AS k
    WHERE s.session_hash = wanted AND s.expires_at > at AND k.tenant_id = s.tenant_id
$$;

REVOKE ALL ON FUNCTION sgam_ui_session(bytea, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sgam_ui_session(bytea, timestamptz) TO sgam_app;
