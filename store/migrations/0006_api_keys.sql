-- API keys: each belongs to one tenant, the tenant of every call made with it. A global table
-- like tenants: a request is authenticated before any tenant is known.
--
-- Only a SHA-256 of the secret is kept, never the secret. The secret is 32 random bytes
-- (256 bits), so guessing it from a leaked hash is hopeless however fast the hash is; slow,
-- salted password hashes (bcrypt, argon2) exist to stretch low-entropy human passwords and
-- would only add tens of milliseconds to every request here.
CREATE TABLE api_keys (
    key_id uuid PRIMARY KEY,
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    secret_hash bytea NOT NULL CHECK (octet_length(secret_hash) = 32),
    created_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CONSTRAINT api_keys_revoked_after_created
        CHECK (revoked_at IS NULL OR revoked_at >= created_at)
);
-- Authentication finds a key by its primary key (the key_id travels inside the token);
-- this one serves listing a tenant's keys, oldest first.
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at, key_id);
