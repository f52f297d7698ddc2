"""``MemoryStore``'s public API, one facade per capability: admin, episodes, facts, conflicts,
subjects, erasure, snapshots, checkpoints, outcomes, procedures, receipts, weak signals,
extraction, retention and page sessions. Each call checks its input, then runs as one
transaction of ``Transactions``."""
