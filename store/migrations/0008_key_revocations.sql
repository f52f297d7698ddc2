-- Server processes cache the API keys they have verified (server/keycache.py). Any change to a
-- key row, revocation above all, is announced on channel sgam_api_key_changed with the key_id
-- as payload, so every process drops that key; a TRUNCATE announces an empty payload: drop them
-- all. PostgreSQL sends a notification only if its transaction commits, and delivers those of
-- different transactions in commit order, which the processes' own sync notifications rely on.
CREATE FUNCTION sgam_notify_api_key_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN
        PERFORM pg_notify('sgam_api_key_changed', '');
    ELSE
        PERFORM pg_notify('sgam_api_key_changed', OLD.key_id::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION sgam_notify_api_key_changed();
CREATE TRIGGER api_keys_truncated AFTER TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION sgam_notify_api_key_changed();
