"""The stale-fact leakage evaluation: its runner and inputs, the scorer (one rule for every
system), the summary, the failure patterns and the report."""
