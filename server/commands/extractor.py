"""``sgam extractor dev``: a rule-based stand-in extractor on localhost, to try the raw-text path
(``extract: now`` or ``background``) with no model at hand.

It speaks the OpenAI-compatible chat protocol the extractor asks (``server.extraction.standin``)
and answers by the rules of ``server.extraction.rules``; it is no model, and says so when it
starts, on every request it answers and in every answer.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Annotated, Any

import typer

extractor_app = typer.Typer(
    help="Extraction helpers: a stand-in extractor to try extraction without a model.",
    no_args_is_help=True,
)

DEFAULT_PORT = 8081


@extractor_app.command()
def dev(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = DEFAULT_PORT,
) -> None:
    """Serve a rule-based stand-in extractor (not a model) until Ctrl-C or SIGTERM.

    It answers POST /v1/chat/completions as the OpenAI-compatible endpoint that
    SGAM_EXTRACTOR_URL names would, proposing a fact only where a sentence names a declared
    attribute and gives a value of its type after the name ("Her city is Tromsø."). Point
    `sgam serve` at it with SGAM_EXTRACTOR_URL=http://HOST:PORT/v1 and any
    SGAM_EXTRACTOR_MODEL.
    """
    import json  # noqa: PLC0415 - keep --help fast
    import threading  # noqa: PLC0415

    from server.extraction.rules import rule_based  # noqa: PLC0415
    from server.extraction.standin import STAND_IN_MODEL, Reply, stand_in  # noqa: PLC0415
    from server.runtime.shutdown import unwinding_on_stop_signals  # noqa: PLC0415

    def answer(request: dict[str, Any]) -> Reply:
        reply = rule_based(request)
        proposed = len(json.loads(reply.content)["updates"])  # counted: no text, no values
        typer.echo(f"stand-in (rule-based, not a model) answered {request.get('model')}:"
                   f" {proposed} candidate(s)")  # fmt: skip
        return reply

    with unwinding_on_stop_signals(), ExitStack() as serving:
        try:
            running = serving.enter_context(stand_in(answer, host=host, port=port))
        except OSError as error:
            typer.echo(f"error: cannot listen on {host}:{port}: {error.strerror}", err=True)
            raise typer.Exit(1) from None
        typer.echo(
            "sgam extractor dev: a rule-based stand-in for an extraction model, not a model.\n"
            f"OpenAI-compatible chat endpoint on {running.base_url} until Ctrl-C. Point the"
            " server at it:\n\n"
            f"    export SGAM_EXTRACTOR_URL={running.base_url}"
            f" SGAM_EXTRACTOR_MODEL={STAND_IN_MODEL}\n",
        )
        threading.Event().wait()
