"""The evidence benchmark: recall@10 of evidence search against exact search, and its latency, by
tenant size."""
