"""Vector search over episodes, through the read snapshot: the encoder, a block's evidence and
experience search, how a hit is cited, and re-embedding after a change of model (read path
step 4). The SQL and the index definition are the store's (``store.episodes``)."""
