"""Replay files, the evaluation contract (design section 9): a fixed sequence of memory
operations run on a fresh database, one JSON result line per input line (``runner``, with the
operations in ``ops``), and the comparison of result lines with expected ones (``compare``).
``sgam replay`` runs them."""
