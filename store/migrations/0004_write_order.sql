-- The order writes arrived in, so a key's history can be replayed: retraction rebuilds a key
-- from its assertions and expiries in arrival order, without the withdrawn fact.

CREATE SEQUENCE write_order;
ALTER TABLE fact_versions ADD COLUMN write_order bigint NOT NULL DEFAULT nextval('write_order');
ALTER TABLE expiries ADD COLUMN write_order bigint NOT NULL DEFAULT nextval('write_order');
CREATE INDEX expiries_key ON expiries (tenant_id, subject, attribute);

-- Facts withdrawn from knowledge: a rebuild leaves them out.
CREATE TABLE retractions (
    tenant_id sgam_identifier NOT NULL,
    fact_id uuid NOT NULL,
    subject sgam_identifier NOT NULL,
    attribute sgam_identifier NOT NULL,
    retracted_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, fact_id)
);
CREATE INDEX retractions_key ON retractions (tenant_id, subject, attribute);
