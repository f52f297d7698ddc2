"""``MemoryStore``'s capabilities, one room each: admin, episodes, facts, conflicts, subjects,
erasure. Each call checks its input, then runs as one transaction of ``Transactions``."""
