"""Replay traces, leakage evaluation, the health classifier and benchmarks."""
