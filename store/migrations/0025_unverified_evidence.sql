-- Evidence not found in its episode: a candidate whose quote is not in its episode's text is
-- stored with evidence_verified false and labelled unverified wherever it is shown. A tenant, and
-- each attribute, may declare that such candidates are refused instead (an `invalid` result that
-- writes nothing). The attribute's own declaration wins; NULL there follows the tenant's.

ALTER TABLE tenants
    ADD COLUMN on_unverified_evidence text NOT NULL DEFAULT 'accept'
        CONSTRAINT tenants_on_unverified_evidence CHECK (on_unverified_evidence IN ('accept', 'refuse'));

ALTER TABLE attributes
    ADD COLUMN on_unverified_evidence text
        CONSTRAINT attributes_on_unverified_evidence CHECK (on_unverified_evidence IN ('accept', 'refuse'));
