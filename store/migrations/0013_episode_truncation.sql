-- Whether an episode's text was cut to fit the embedding model's input when it was embedded:
-- a model reads at most its maximum sequence length in tokens (all-MiniLM-L6-v2: 256, special
-- tokens included), so the vector of a longer text stands for its beginning only. Kept per
-- vector, since another model has another limit; an episode reads it as `embedding_truncated`.
-- Vectors stored before this migration read as not truncated.
ALTER TABLE episode_vectors ADD COLUMN embedding_truncated boolean NOT NULL DEFAULT false;
