"""What a serving process holds and runs: its resources, background loops, the periodic purge, the
database made ready, its log, and a clean stop."""
