-- The order writes arrived in, so a key's history can be replayed: retraction rebuilds a key
-- from its assertions and expiries in arrival order, without the withdrawn fact.

CREATE SEQUENCE write_order;
ALTER TABLE fact_versions ADD COLUMN write_order bigint;
ALTER TABLE expiries ADD COLUMN write_order bigint;

-- Rows written before this migration are numbered in the order they arrived, which their
-- system time records: a default filled in as the table is rewritten would follow the rows'
-- physical order instead, which updates and vacuum reshuffle. Rows recorded at one instant (one
-- call) follow their valid time, then the row's id, so the numbering is the same on every copy
-- of the data.
CREATE TEMPORARY TABLE arrivals AS
SELECT row_number() OVER (ORDER BY recorded_at, valid_at, row_id) AS write_order, *
FROM (
    SELECT tenant_id, version_id AS row_id, recorded_at, valid_from AS valid_at
    FROM fact_versions
    UNION ALL
    SELECT tenant_id, expiry_id, recorded_at, at FROM expiries
) AS written;

UPDATE fact_versions AS f SET write_order = a.write_order
FROM arrivals AS a WHERE f.tenant_id = a.tenant_id AND f.version_id = a.row_id;
UPDATE expiries AS e SET write_order = a.write_order
FROM arrivals AS a WHERE e.tenant_id = a.tenant_id AND e.expiry_id = a.row_id;
SELECT setval('write_order', (SELECT count(*) FROM arrivals) + 1, false);
DROP TABLE arrivals;

ALTER TABLE fact_versions
    ALTER COLUMN write_order SET DEFAULT nextval('write_order'),
    ALTER COLUMN write_order SET NOT NULL;
ALTER TABLE expiries
    ALTER COLUMN write_order SET DEFAULT nextval('write_order'),
    ALTER COLUMN write_order SET NOT NULL;
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
