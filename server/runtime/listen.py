"""The address a server listens on, checked before anything else of a start happens."""

from __future__ import annotations

import errno
import socket


class AddressInUse(Exception):
    """The host and port cannot be listened on; the message says why, in one sentence."""


def check_address(host: str, port: int) -> None:
    """Refuse an address the server could not listen on, before the database is touched, so
    a start that fails creates no tenant and prints no key. A server already listening there
    is the usual cause; the socket is bound the way uvicorn binds (``SO_REUSEADDR``) and
    closed at once."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise AddressInUse(f"cannot listen on {host}: {error.strerror}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise AddressInUse(
                    f"port {port} on {host} is in use (another server?); choose another with"
                    " --port or SGAM_PORT"
                ) from None
            raise AddressInUse(f"cannot listen on {host}:{port}: {error.strerror}") from None
