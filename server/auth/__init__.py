"""Who is calling: the key guard, verified keys cached per process, and the listener that drops
revoked ones."""
