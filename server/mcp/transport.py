"""How the MCP server is reached: stdio for a desktop client, streamable HTTP behind a key.

Over HTTP every request must carry ``Authorization: Bearer <the SGAM API key>`` that the
server itself uses: whoever may call the tools may read and write the key's tenant anyway.
Anything else is answered 401 with a problem+json body, before the MCP layer sees it.
"""

from __future__ import annotations

import hmac
import json
from typing import Any, Final

from server.client import AsyncSGAMClient
from store.contract.problems import ERRORS, PROBLEM_MEDIA_TYPE, ErrorCode

MCP_PATH: Final = "/mcp"
"""Where the streamable HTTP endpoint is served."""

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Any
Send = Any
ASGIApp = Any


class BearerKey:
    """ASGI middleware: requests pass only with ``Authorization: Bearer <key>``; the app's
    lifespan passes as it is."""

    def __init__(self, app: ASGIApp, key: str) -> None:
        self.app = app
        self.key = key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" or self._authorized(scope):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # policy violation
        else:
            await _unauthorized(send)

    def _authorized(self, scope: Scope) -> bool:
        given = [value for name, value in scope["headers"] if name.lower() == b"authorization"]
        if len(given) != 1:
            return False
        scheme, _, token = given[0].partition(b" ")
        # The scheme's case does not matter (RFC 9110); the key is compared in constant time.
        return scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self.key)


_UNAUTHORIZED = ErrorCode.UNAUTHORIZED


async def _unauthorized(send: Send) -> None:
    body = json.dumps(
        {
            "type": f"urn:sgam:problem:{_UNAUTHORIZED}",
            "title": ERRORS[_UNAUTHORIZED].title,
            "status": ERRORS[_UNAUTHORIZED].status,
            "detail": "send the SGAM API key as Authorization: Bearer <key>",
            "code": _UNAUTHORIZED.value,
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": ERRORS[_UNAUTHORIZED].status,
            "headers": [
                (b"content-type", PROBLEM_MEDIA_TYPE.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="sgam-mcp"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def serve_stdio(client: AsyncSGAMClient) -> None:
    """Serve the tools on standard input and output until the client closes them."""
    from mcp.server.stdio import stdio_server  # noqa: PLC0415 - keep --help fast

    from server.mcp.server import build_server  # noqa: PLC0415

    server = build_server(client)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def http_app(client: AsyncSGAMClient, *, key: str, host: str) -> ASGIApp:
    """The streamable HTTP app at ``MCP_PATH``, behind ``BearerKey``."""
    from server.mcp.server import build_server  # noqa: PLC0415 - keep --help fast

    app = build_server(client).streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    return BearerKey(app, key)


async def serve_http(
    client: AsyncSGAMClient, *, key: str, host: str, port: int, log_level: str
) -> None:
    """Serve the tools over streamable HTTP at ``http://host:port/mcp`` until stopped."""
    import uvicorn  # noqa: PLC0415 - keep --help fast

    config = uvicorn.Config(
        http_app(client, key=key, host=host), host=host, port=port, log_level=log_level
    )
    await uvicorn.Server(config).serve()
