"""Governance: retention classes and the purge, legal holds, erasure and its tombstones, receipts,
API keys and the pages' sessions."""
