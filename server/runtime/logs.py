"""The server's log: one JSON object a line on stderr, each carrying its request's id.

Lines carry what an operator needs to find a request and see how it ended (route template,
status, problem code, tenant, timing, SQLSTATE), never what a tenant stored: no episode text,
fact values, keys or query strings (``server.http.request_log`` builds the request lines that way).
``configure_logging`` runs when a server process builds its app (``server.asgi``), never at
import.
"""

from __future__ import annotations

import logging
import logging.config
from contextvars import ContextVar
from typing import Any, Final

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

REQUEST_ID: ContextVar[str | None] = ContextVar("request_id", default=None)
"""The id of the request being served; worker threads running its handler inherit it."""


class RequestIdFilter(logging.Filter):
    """Stamps each record with ``request_id``: that of the request it was logged for, if any."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Add the field; never drops a record."""
        if getattr(record, "request_id", None) is None:
            record.request_id = REQUEST_ID.get()
        return True


def json_formatter() -> logging.Formatter:
    """The formatter of every line: level, logger, message, the record's fields, time."""
    return JsonFormatter(
        ["levelname", "name", "message"],
        rename_fields={"levelname": "level", "name": "logger"},
        timestamp="time",  # ISO 8601 in UTC
        # uvicorn adds its message again with terminal colours.
        reserved_attrs=[*RESERVED_ATTRS, "color_message"],
        json_ensure_ascii=False,
    )


def json_handler(stream: Any = None) -> logging.Handler:
    """A handler writing JSON lines to ``stream`` (stderr by default), request ids added."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(json_formatter())
    handler.addFilter(RequestIdFilter())
    return handler


OWN: Final = ("server", "store", "retrieval")
"""The packages whose loggers write through the JSON handler."""


def logging_config(level: int | str) -> dict[str, Any]:
    """The ``dictConfig`` of a server process: JSON lines for its own loggers and uvicorn's.

    uvicorn's access line is switched off: ``server.requests`` logs each request once, with
    the route template instead of the concrete path and without its query string.
    """
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "handlers": {"json": {"()": json_handler}},
        "loggers": {
            **{name: {"handlers": ["json"], "level": level, "propagate": False} for name in OWN},
            # uvicorn keeps the levels its --log-level set; only its format changes.
            "uvicorn": {"handlers": ["json"], "propagate": False},
            "uvicorn.error": {"propagate": True},
            # No handler at all: uvicorn then skips formatting its access line.
            "uvicorn.access": {"handlers": [], "propagate": False},
        },
        "root": {"handlers": ["json"], "level": "WARNING"},
    }


def configure_logging(level: int | str | None = None) -> None:
    """Route the process's log through the JSON handler.

    ``level`` defaults to the level of uvicorn's error log, which ``sgam serve --log-level``
    (or uvicorn's own ``--log-level``) sets; INFO outside uvicorn.
    """
    if level is None:
        uvicorn_level = logging.getLogger("uvicorn.error").level
        level = uvicorn_level or logging.INFO
    logging.config.dictConfig(logging_config(level))
