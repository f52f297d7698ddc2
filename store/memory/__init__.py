"""Working and procedural memory: a thread's checkpoints, and procedures with their approval and
activation."""
