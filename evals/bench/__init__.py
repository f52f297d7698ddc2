"""``sgam bench``: the served API timed against its floor and the plain baseline, the writers,
receipts and row-level security costs; the name and evidence benchmarks in their own rooms."""
