"""The temporal fact store: the wire contract (``contract``), the write path and exact reads
(``facts``), attributes, episodes, subjects, working and procedural memory, governance, the
database and its migrations (``db``), and the public API over them (``api``, ``service``)."""
