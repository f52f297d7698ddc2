"""The read path: what a question asks (``question``), which keys it reads (``routing``),
evidence found by similarity (``search``), the cited block (``context``), and memory health
judged from receipts (``memory_health``)."""
