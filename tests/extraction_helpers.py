"""A stand-in OpenAI-compatible chat endpoint on localhost, scripted by each test.

It answers ``POST /v1/chat/completions`` in the structured-output format: the script is a
callable given the request's JSON (model, messages, response_format) that returns a ``Reply``:
the content the model "wrote" (its JSON text, or any text), an HTTP status, a delay.
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


@dataclass(frozen=True)
class Reply:
    """One scripted answer: ``content`` as the model's message, or an error ``status``."""

    content: str = '{"updates": []}'
    status: int = 200
    delay_s: float = 0.0


def updates(*candidates: dict[str, Any]) -> Reply:
    """A well-formed answer proposing ``candidates``."""
    return Reply(json.dumps({"updates": list(candidates)}))


Script = Callable[[dict[str, Any]], Reply]


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


def _completion(model: str, content: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
    ).encode()


@contextmanager
def stand_in(script: Script) -> Iterator[StandIn]:
    """Serve the script on 127.0.0.1 (a free port) until the block ends."""
    state = StandIn(base_url="", script=script)

    class Handler(BaseHTTPRequestHandler):
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
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
