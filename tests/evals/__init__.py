"""The evaluations and benchmarks: histories, arms, the scorer, the report, the peers."""
