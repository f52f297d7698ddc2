"""The evaluations, not the product (the ``evals`` extra): generated histories with gold, the
systems compared, the stale-fact leakage evaluation, the benchmarks, and replay traces."""
