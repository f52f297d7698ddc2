"""A loop on a thread of its own, beside the app: started in the lifespan, stopped after it."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod


class BackgroundLoop(ABC):
    """``start`` runs ``run`` on a daemon thread; ``stop`` sets ``stopping`` and waits for it
    (so the work at hand finishes first)."""

    def __init__(self, name: str) -> None:
        self.stopping = threading.Event()
        self._thread = threading.Thread(target=self.run, name=name, daemon=True)

    def start(self) -> None:
        """Start the loop."""
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Ask the loop to stop and wait for it."""
        self.stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @abstractmethod
    def run(self) -> None:
        """The loop: it returns once ``stopping`` is set."""
