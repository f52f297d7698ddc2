"""Extraction: an episode's text sent to an OpenAI-compatible chat endpoint, the candidates it
proposes written through the store's write path, and the queue's jobs worked (claimed, leased,
retried, dead-lettered). A user of ``store.service.MemoryStore`` can extract without the HTTP
server; the server runs the same jobs on a thread of its own (``server.extraction``)."""
