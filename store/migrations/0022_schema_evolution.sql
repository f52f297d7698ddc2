-- Schema evolution of attribute declarations (`sgam attribute migrate`,
-- `POST /v1/attributes/{attribute}/migrations`). A change of value type, of enum members or of
-- name rewrites the current versions of the attribute's facts under the new declaration, in one
-- transaction per attribute and tenant; the old versions are retired, never deleted.
--
-- A renamed attribute keeps its row (its retired versions still cite it) with `renamed_to` set:
-- it is no longer declared, and until the migration's `dual_read_until` reads and writes under
-- the old name are answered from, and mapped to, the new one.
ALTER TABLE attributes
    ADD COLUMN renamed_to sgam_identifier,
    ADD CONSTRAINT attributes_renamed_to FOREIGN KEY (tenant_id, renamed_to)
        REFERENCES attributes (tenant_id, attribute);

-- One row per migration that ran (dry runs leave none). `migrated_from` is the old name of a
-- rename (null otherwise); `kept_fact_ids` the facts left under the old declaration because
-- their value could not be converted (`keep_unconvertible`): ids only, no values.
CREATE TABLE attribute_migrations (
    tenant_id sgam_identifier NOT NULL,
    migration_id uuid NOT NULL,
    attribute sgam_identifier NOT NULL,
    migrated_from sgam_identifier,
    from_schema_version integer NOT NULL,
    schema_version integer NOT NULL,
    from_value_type text NOT NULL,
    value_type text NOT NULL,
    converted integer NOT NULL CHECK (converted >= 0),
    kept_fact_ids uuid[] NOT NULL DEFAULT '{}',
    migrated_at timestamptz NOT NULL,
    dual_read_until timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, migration_id),
    FOREIGN KEY (tenant_id, attribute) REFERENCES attributes (tenant_id, attribute),
    FOREIGN KEY (tenant_id, migrated_from) REFERENCES attributes (tenant_id, attribute),
    CONSTRAINT attribute_migrations_versions CHECK (schema_version > from_schema_version),
    CONSTRAINT attribute_migrations_window CHECK (dual_read_until >= migrated_at)
);
-- The old name's lookup (dual reads) and an attribute's migrations (flagged facts).
CREATE INDEX attribute_migrations_from ON attribute_migrations (tenant_id, migrated_from);
CREATE INDEX attribute_migrations_attribute ON attribute_migrations (tenant_id, attribute);
GRANT SELECT, INSERT, UPDATE, DELETE ON attribute_migrations TO sgam_app;

ALTER TABLE attribute_migrations ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_wall ON attribute_migrations
    USING (tenant_id = current_setting('sgam.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('sgam.tenant_id', true));
