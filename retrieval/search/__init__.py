"""Vector search over episodes: the encoder, the HNSW index, evidence and experience search, re-
embedding (read path step 4)."""
