"""The systems the leakage evaluation compares: SGAM exact and fed a noisy extraction, and the
descriptive-memory baselines (other memory systems are in ``evals.peers``)."""
