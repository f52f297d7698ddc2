-- Receipt secrets: each tenant's key for the hashes its receipts carry (design, section 6, and
-- invariant 8). A receipt's memory key, owner key and scope hashes are HMAC-SHA-256 under the
-- tenant's current secret, and the receipt names the secret's version, so that holding receipts
-- is not enough to confirm a guessed subject by hashing names. A rotation adds the next version;
-- older versions stay, so receipts made with them still compare. Version 0 (no row) names the
-- receipts made before this migration, whose hashes are plain SHA-256.

CREATE TABLE receipt_secrets (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    version integer NOT NULL CHECK (version >= 1),
    secret bytea NOT NULL CHECK (octet_length(secret) >= 32),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, version)
);
GRANT SELECT, INSERT ON receipt_secrets TO sgam_app;

ALTER TABLE receipt_secrets ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON receipt_secrets
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));

ALTER TABLE receipts
    ADD COLUMN secret_version integer NOT NULL DEFAULT 0
        CONSTRAINT receipts_secret_version CHECK (secret_version >= 0);
