-- A second wall between tenants: row-level security on every table with a tenant_id, in force
-- for the role the API works as.
--
-- The server connects with one DATABASE_URL. Migrations and operator commands run as that URL's
-- own role (which owns the tables); every pooled API connection runs `SET ROLE sgam_app`, a
-- role without login, superuser or BYPASSRLS. Each of its transactions names its tenant with
-- set_config('sgam.tenant_id', ...), and the policies below show it that tenant's rows only:
-- a wrong or missing setting shows nothing and can write nothing.
--
-- Two things are read before a tenant is known, through functions that run as the tables'
-- owner and answer one question each: an API key's tenant and secret hash by key id, and the
-- tenant a key belongs to (revocation by key id).

DO $$
DECLARE
    me text := current_user;
    hint text := format(
        'An administrator runs: CREATE ROLE sgam_app NOLOGIN NOSUPERUSER NOBYPASSRLS;'
        ' GRANT sgam_app TO %I WITH SET TRUE;', current_user);
BEGIN
    IF to_regrole('sgam_app') IS NULL THEN
        IF NOT (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = me) THEN
            RAISE EXCEPTION 'role sgam_app does not exist and % may not create roles', me
                USING HINT = hint;
        END IF;
        CREATE ROLE sgam_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
    END IF;
    IF (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = 'sgam_app') THEN
        RAISE EXCEPTION 'role sgam_app must not be a superuser nor bypass row-level security'
            USING HINT = 'An administrator runs: ALTER ROLE sgam_app NOSUPERUSER NOBYPASSRLS;';
    END IF;
    IF NOT pg_has_role(me, 'sgam_app', 'SET') THEN
        BEGIN
            EXECUTE format('GRANT sgam_app TO %I WITH SET TRUE', me);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE EXCEPTION '% may not SET ROLE sgam_app', me USING HINT = hint;
        END;
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public TO sgam_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO sgam_app;
REVOKE INSERT, UPDATE, DELETE ON schema_migrations FROM sgam_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO sgam_app;
-- Tables of later migrations are the API's to use too; each must still turn on its own row
-- security (tests/test_row_security.py fails for one that does not).
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO sgam_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO sgam_app;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY[
        'tenants', 'attributes', 'episodes', 'episode_vectors', 'expiries', 'fact_versions',
        'retractions', 'conflicts', 'tombstones', 'api_keys'
    ] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY tenant_wall ON %I'
            ' USING (tenant_id = current_setting(''sgam.tenant_id'', true))'
            ' WITH CHECK (tenant_id = current_setting(''sgam.tenant_id'', true))', t);
    END LOOP;
END
$$;

CREATE FUNCTION sgam_active_key(wanted uuid)
RETURNS TABLE (key_id uuid, tenant_id text, secret_hash bytea)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT k.key_id, k.tenant_id, k.secret_hash FROM public.api_keys AS k
    WHERE k.key_id = wanted AND k.revoked_at IS NULL
$$;

CREATE FUNCTION sgam_key_tenant(wanted uuid) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    SELECT k.tenant_id FROM public.api_keys AS k WHERE k.key_id = wanted
$$;

REVOKE ALL ON FUNCTION sgam_active_key(uuid), sgam_key_tenant(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION sgam_active_key(uuid), sgam_key_tenant(uuid) TO sgam_app;
