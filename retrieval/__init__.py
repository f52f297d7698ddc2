"""Embeddings, evidence search, question planning and context assembly."""
