"""Signing in: the server's key that signs the pages' CSRF tokens, and the limit on refusals.

The sign-in form has no session yet. Its cookie (``LOGIN_COOKIE``) holds a random nonce and the
form a token signed for that nonce with the server's key (HMAC-SHA256), so a pair planted from
elsewhere (a cookie set by a sibling site, a form of the attacker's) does not pass, as it would
under a plain double submit. A session's forms carry a token signed the same way for its id.

The key is ``SGAM_UI_SECRET`` when set, else one kept in the data folder (``ui_secret``, created
on first use, readable by its owner only), which every process sharing the folder reads.

Refused sign-ins (a form without its token, or an unknown key) are counted per client address
in this process; past ``MAX_REFUSED`` within ``WINDOW_S`` the form answers 429 with
``Retry-After`` until that window ends.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
import os
import secrets
from pathlib import Path
from typing import Any, Final

from litestar import Request
from litestar.stores.base import Store

from server.settings import Settings

MAX_REFUSED: Final = 10
"""Refused sign-ins one address may make within ``WINDOW_S``."""
WINDOW_S: Final = 300
KEY_FILE: Final = "ui_secret"
STORE: Final = "ui_sign_in"
"""The app's store (``app.stores``) that counts refusals by address."""
_KEY_BYTES = 32


class TooManySignIns(Exception):
    """An address past its refused sign-ins: it may try again in ``retry_after_s`` seconds."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"too many refused sign-ins; try again in {retry_after_s} s")
        self.retry_after_s = retry_after_s


def server_key(settings: Settings) -> bytes:
    """The key that signs the pages' CSRF tokens: the setting's, else the data folder's."""
    if settings.ui_secret is not None:
        return hashlib.sha256(settings.ui_secret.get_secret_value().encode()).digest()
    return _kept_key(settings.data_dir)


@functools.cache
def _kept_key(folder: Path) -> bytes:
    """The key kept in ``folder``; the first process to need it writes it (atomically)."""
    path = folder / KEY_FILE
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        draft = folder / f".{KEY_FILE}.{secrets.token_hex(8)}"
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(secrets.token_bytes(_KEY_BYTES))
        try:
            os.link(draft, path)  # fails if another process got there first: its key counts
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_bytes()


def signed(purpose: str, value: str, key: bytes) -> str:
    """``value``'s token for ``purpose`` (a sign-in form's nonce, a session's id)."""
    message = f"sgam-ui-{purpose}\x00{value}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def sign_in_token(nonce: str, key: bytes) -> str:
    """The token a sign-in form carries for the nonce in its cookie."""
    return signed("sign-in", nonce, key)


def is_sign_in_token(nonce: str | None, offered: str | None, key: bytes) -> bool:
    """Whether ``offered`` is the token of the cookie's ``nonce`` (constant time)."""
    if not nonce or offered is None:
        return False
    return hmac.compare_digest(offered, sign_in_token(nonce, key))


class RefusedSignIns:
    """Refused sign-ins per client address, in the app's store, each count kept for a window."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @classmethod
    def of(cls, request: Request[Any, Any, Any]) -> RefusedSignIns:
        """The counts of ``request``'s app."""
        return cls(request.app.stores.get(STORE))

    async def check(self, address: str) -> None:
        """Raise ``TooManySignIns`` while ``address`` is past its refusals."""
        count = await self._store.get(address)
        if count is not None and int(count) >= MAX_REFUSED:
            left = await self._store.expires_in(address)
            raise TooManySignIns(max(1, math.ceil(left if left is not None else WINDOW_S)))

    async def refused(self, address: str) -> None:
        """Count one refusal; the first opens the window, the others keep its end."""
        count = await self._store.get(address)
        left = await self._store.expires_in(address) if count is not None else None
        total = 1 if count is None else int(count) + 1
        await self._store.set(address, str(total), expires_in=max(1, left or WINDOW_S))


def client_address(request: Request[Any, Any, Any]) -> str:
    """The address refusals are counted by: the connection's peer (a proxy's own address
    unless the server is run behind one that rewrites it, such as uvicorn's proxy headers)."""
    return request.client.host if request.client else "unknown"
