"""Routing a question among the keys its subject holds, by similarity to the attributes' declared
words (read path step 3)."""
