"""Pure cores, no database: the temporal rules, routing, planning, the block and its marks, labels,
values."""
