"""A stand-in OpenAI-compatible chat endpoint on localhost, so extraction can run without a model.

It answers ``POST /v1/chat/completions`` in the structured-output format the extractor asks
for (``extraction.extractor``): a script given the request's JSON (model, messages,
response_format) returns a ``Reply``, the content the endpoint "wrote" (its JSON text, or any
text), an HTTP status, a delay. ``sgam extractor dev`` serves the rule-based script
(``server.extraction.rules``); a test serves a script of its own. ``GET /v1/models`` lists the
one model it stands in for. Every answer says, in its ``model`` and ``system_fingerprint``,
that it comes from a rule-based stand-in, not a model.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STAND_IN_MODEL = "sgam-stand-in"
"""The model id the stand-in lists and signs its answers with (any requested model is served)."""
FINGERPRINT = "sgam-extractor-dev: a rule-based stand-in, not a model"


@dataclass(frozen=True)
class Reply:
    """One answer: ``content`` as the endpoint's message, or an error ``status``."""

    content: str = '{"updates": []}'
    status: int = 200
    delay_s: float = 0.0


def updates(*candidates: dict[str, Any]) -> Reply:
    """A well-formed answer proposing ``candidates``."""
    return Reply(json.dumps({"updates": list(candidates)}, ensure_ascii=False))


Script = Callable[[dict[str, Any]], Reply]
"""What the endpoint answers to a chat completion request (its JSON body)."""


@dataclass
class StandIn:
    """The running stand-in: its base URL, the requests it received, its current script."""

    base_url: str
    script: Script
    requests: list[dict[str, Any]] = field(default_factory=list)

    def user_context(self, index: int = -1) -> dict[str, Any]:
        """The JSON context the prompt's user message carried, of request ``index``."""
        messages = self.requests[index]["messages"]
        parsed: dict[str, Any] = json.loads(messages[-1]["content"])
        return parsed


def _completion(requested: str, content: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-stand-in",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": f"{STAND_IN_MODEL} (asked for {requested}; rule-based, not a model)",
            "system_fingerprint": FINGERPRINT,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        },
        ensure_ascii=False,
    ).encode()


_MODELS = json.dumps(
    {
        "object": "list",
        "data": [{"id": STAND_IN_MODEL, "object": "model", "created": 0, "owned_by": FINGERPRINT}],
    }
).encode()


def _handler(state: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/v1/models":
                self.send_error(404)
                return
            self._send(200, _MODELS)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            if self.path.rstrip("/") != "/v1/chat/completions":
                self.send_error(404)
                return
            state.requests.append(request)
            reply = state.script(request)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            if reply.status != 200:
                body = json.dumps({"error": {"message": "scripted failure"}}).encode()
            else:
                body = _completion(str(request.get("model")), reply.content)
            self._send(reply.status, body)

        def _send(self, status: int, body: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@contextmanager
def stand_in(script: Script, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[StandIn]:
    """Serve the script on ``host`` (port 0: a free one) on a thread until the block ends."""
    state = StandIn(base_url="", script=script)
    server = ThreadingHTTPServer((host, port), _handler(state))
    server.daemon_threads = True
    state.base_url = f"http://{host}:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
