-- The temporal fact store: tenants, episodes, the attribute schema, bitemporal fact versions,
-- expiries, conflicts and erasure tombstones. Every table of tenant data leads with tenant_id.

CREATE EXTENSION IF NOT EXISTS btree_gist;
CREATE EXTENSION IF NOT EXISTS vector;

CREATE DOMAIN sgam_identifier AS text
    CHECK (VALUE ~ '^[A-Za-z0-9_.:@-]{1,200}$');

CREATE TABLE tenants (
    tenant_id sgam_identifier PRIMARY KEY,
    created_at timestamptz NOT NULL
);

CREATE TABLE attributes (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    attribute sgam_identifier NOT NULL,
    description text NOT NULL DEFAULT '',
    value_type text NOT NULL
        CHECK (value_type IN ('string', 'date', 'datetime', 'number', 'integer', 'boolean',
                              'enum', 'json')),
    enum_values text[] NOT NULL DEFAULT '{}',
    aliases text[] NOT NULL DEFAULT '{}',
    memory_type text NOT NULL DEFAULT 'semantic'
        CHECK (memory_type IN ('working', 'semantic', 'episodic', 'procedural')),
    on_equal_start text NOT NULL DEFAULT 'reject'
        CHECK (on_equal_start IN ('reject', 'source_precedence', 'confirmed_wins')),
    retention_class sgam_identifier NOT NULL DEFAULT 'standard',
    schema_version integer NOT NULL DEFAULT 1 CHECK (schema_version >= 1),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, attribute),
    CONSTRAINT attributes_enum_values CHECK ((value_type = 'enum') = (cardinality(enum_values) > 0))
);

-- An erased episode that another subject's fact still cites stays as a stub: id, kind, times
-- and content hash, with text, subjects, session and metadata gone.
CREATE TABLE episodes (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    episode_id sgam_identifier NOT NULL,
    occurred_at timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL,
    kind text NOT NULL
        CHECK (kind IN ('message', 'tool_result', 'event', 'file', 'ticket',
                        'user_confirmation', 'inference')),
    session_id sgam_identifier,
    subjects text[] NOT NULL DEFAULT '{}',
    text text,
    content_hash text NOT NULL,
    retention_class sgam_identifier NOT NULL DEFAULT 'standard',
    metadata jsonb NOT NULL DEFAULT '{}',
    erased_at timestamptz,
    PRIMARY KEY (tenant_id, episode_id),
    CONSTRAINT episodes_stub_has_no_text CHECK ((erased_at IS NULL) = (text IS NOT NULL))
);
CREATE INDEX episodes_subjects ON episodes USING gin (subjects);
CREATE INDEX episodes_occurred ON episodes (tenant_id, occurred_at);

CREATE TABLE expiries (
    tenant_id sgam_identifier NOT NULL,
    expiry_id uuid NOT NULL,
    subject sgam_identifier NOT NULL,
    attribute sgam_identifier NOT NULL,
    at timestamptz NOT NULL,
    source_episode_id sgam_identifier NOT NULL,
    recorded_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, expiry_id),
    FOREIGN KEY (tenant_id, attribute) REFERENCES attributes (tenant_id, attribute),
    FOREIGN KEY (tenant_id, source_episode_id) REFERENCES episodes (tenant_id, episode_id)
);
CREATE INDEX expiries_subject ON expiries (tenant_id, subject);
CREATE INDEX expiries_source ON expiries (tenant_id, source_episode_id);

-- Bitemporal versions: [valid_from, valid_to) is when the value holds in the world,
-- [recorded_at, retired_at) when the server believed it. Rows are never updated except to
-- set retired_at; a changed window is a new version of the same fact_id.
CREATE TABLE fact_versions (
    tenant_id sgam_identifier NOT NULL,
    version_id uuid NOT NULL,
    fact_id uuid NOT NULL,
    subject sgam_identifier NOT NULL,
    attribute sgam_identifier NOT NULL,
    value jsonb NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to timestamptz,
    recorded_at timestamptz NOT NULL,
    retired_at timestamptz,
    supersedes uuid,
    ended_by uuid,
    ended_by_kind text CHECK (ended_by_kind IN ('fact', 'expiry')),
    source_episode_id sgam_identifier NOT NULL,
    source_kind text NOT NULL,
    evidence text,
    evidence_verified boolean NOT NULL,
    schema_version integer NOT NULL,
    PRIMARY KEY (tenant_id, version_id),
    FOREIGN KEY (tenant_id, attribute) REFERENCES attributes (tenant_id, attribute),
    FOREIGN KEY (tenant_id, source_episode_id) REFERENCES episodes (tenant_id, episode_id),
    CONSTRAINT fact_versions_valid_window CHECK (valid_to IS NULL OR valid_from < valid_to),
    CONSTRAINT fact_versions_system_window CHECK (retired_at IS NULL OR retired_at >= recorded_at),
    CONSTRAINT fact_versions_ended_by_kind CHECK ((ended_by IS NULL) = (ended_by_kind IS NULL)),
    -- Invariant 2: one truth per key per instant, in valid and system time at once.
    CONSTRAINT fact_versions_one_truth EXCLUDE USING gist (
        tenant_id WITH =,
        subject WITH =,
        attribute WITH =,
        tstzrange(valid_from, valid_to) WITH &&,
        tstzrange(recorded_at, retired_at) WITH &&
    )
);
-- Current knowledge: what every write and every "now" read looks at.
CREATE INDEX fact_versions_current
    ON fact_versions (tenant_id, subject, attribute, valid_from)
    WHERE retired_at IS NULL;
CREATE INDEX fact_versions_fact ON fact_versions (tenant_id, fact_id);
CREATE INDEX fact_versions_source ON fact_versions (tenant_id, source_episode_id);

CREATE TABLE conflicts (
    tenant_id sgam_identifier NOT NULL,
    conflict_id uuid NOT NULL,
    subject sgam_identifier NOT NULL,
    attribute sgam_identifier NOT NULL,
    valid_from timestamptz NOT NULL,
    policy text NOT NULL,
    incumbent_fact_id uuid NOT NULL,
    challenger_value jsonb NOT NULL,
    challenger_episode_id sgam_identifier NOT NULL,
    challenger_kind text NOT NULL,
    evidence text,
    evidence_verified boolean NOT NULL,
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    created_at timestamptz NOT NULL,
    resolved_at timestamptz,
    resolution text CHECK (resolution IN ('incumbent', 'challenger')),
    PRIMARY KEY (tenant_id, conflict_id),
    FOREIGN KEY (tenant_id, attribute) REFERENCES attributes (tenant_id, attribute),
    FOREIGN KEY (tenant_id, challenger_episode_id) REFERENCES episodes (tenant_id, episode_id),
    CONSTRAINT conflicts_resolution CHECK ((status = 'resolved') = (resolved_at IS NOT NULL))
);
CREATE INDEX conflicts_open ON conflicts (tenant_id, subject, attribute) WHERE status = 'open';
CREATE INDEX conflicts_challenger ON conflicts (tenant_id, challenger_episode_id);

-- What an erasure removed, without content: hashes, counts and the time.
CREATE TABLE tombstones (
    tenant_id sgam_identifier NOT NULL REFERENCES tenants (tenant_id),
    tombstone_id uuid NOT NULL,
    target text NOT NULL CHECK (target IN ('subject', 'episode')),
    target_hash text NOT NULL,
    erased_at timestamptz NOT NULL,
    episodes_deleted integer NOT NULL,
    episodes_stubbed integer NOT NULL,
    fact_versions_deleted integer NOT NULL,
    conflicts_deleted integer NOT NULL,
    expiries_deleted integer NOT NULL,
    episode_hashes text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant_id, tombstone_id)
);
