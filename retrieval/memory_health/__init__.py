"""Memory health: one verdict per expected memory, read from content-free receipts.

The input and output models are the contract's (``store.contract.health``); ``classifier``
holds the pure decision rules (the first failing layer wins), ``cases`` the nine-case fixture
that pins them down. ``POST /v1/memory-health`` and ``sgam health`` serve them.
"""
