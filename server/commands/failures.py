"""How the ``sgam`` command line ends: every failure is one line on stderr, ``error: ...``.

Exit codes: 0 done, 1 a failure (the database cannot be reached, a refusal, a bug), 2 a usage
error (an unknown option, a bad value, a missing argument), 130 interrupted. ``--debug``
anywhere before a ``--`` shows a failure's traceback instead of its line.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

import typer

DEBUG = "--debug"
USAGE = 2
FAILURE = 1
INTERRUPTED = 130


def split_debug(args: Sequence[str]) -> tuple[list[str], bool]:
    """The arguments without ``--debug``, and whether it was given (before any ``--``)."""
    kept: list[str] = []
    debug = False
    for position, arg in enumerate(args):
        if arg == "--":
            kept.extend(args[position:])
            break
        if arg == DEBUG:
            debug = True
        else:
            kept.append(arg)
    return kept, debug


def one_line(error: BaseException) -> str:
    """The error as one line: its message with every run of whitespace folded, else its kind."""
    text = " ".join(str(error).split())
    return text or type(error).__name__


def _line(error: typer.TyperException) -> str:
    """A command-line error (typer's own, click's kind) as one line; a usage error points at
    the help of the command it was in."""
    message = " ".join(error.format_message().split())
    if getattr(error, "exit_code", FAILURE) != USAGE:
        return f"error: {message}"
    context = getattr(error, "ctx", None)
    command = context.command_path if context is not None else "sgam"
    return f"error: {message} (see '{command} --help')"


def run(app: typer.Typer, args: Sequence[str], *, err: TextIO | None = None) -> int:
    """Run the command line on ``args``; its exit code, each failure said in one line."""
    stream = err if err is not None else sys.stderr
    args, debug = split_debug(args)
    try:
        code = app(args=args, prog_name="sgam", standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        print("error: interrupted", file=stream)
        return INTERRUPTED
    except typer.TyperException as error:
        if type(error).__name__ != "NoArgsIsHelpError":  # its help is already printed
            print(_line(error), file=stream)
        return int(getattr(error, "exit_code", FAILURE))
    except Exception as error:
        if debug:
            raise
        print(f"error: {one_line(error)} (--debug shows the traceback)", file=stream)
        return FAILURE
    return code if isinstance(code, int) else 0
