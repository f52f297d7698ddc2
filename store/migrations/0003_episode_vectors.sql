-- Episode vectors for evidence search, kept apart from episodes and keyed by model, so a new
-- model is a re-embed, not a schema change. halfvec halves the storage of float4 vectors.

CREATE TABLE episode_vectors (
    tenant_id sgam_identifier NOT NULL,
    episode_id sgam_identifier NOT NULL,
    model text NOT NULL,
    embedding halfvec NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, model, episode_id),
    FOREIGN KEY (tenant_id, episode_id) REFERENCES episodes (tenant_id, episode_id)
        ON DELETE CASCADE
);

-- HNSW for large scopes, one per model with the model's dimensions (the default model's here;
-- the re-embed command creates one for another model). Small scopes are scanned exactly.
CREATE INDEX episode_vectors_hnsw_all_minilm_l6_v2
    ON episode_vectors USING hnsw ((embedding::halfvec(384)) halfvec_cosine_ops)
    WHERE model = 'all-MiniLM-L6-v2';

CREATE INDEX episode_vectors_episode ON episode_vectors (tenant_id, episode_id);
