"""The ``evals`` extra: what ``sgam eval`` and ``sgam bench`` need beyond the server.

The server's own install leaves out the plotting library the reports draw their charts with.
Both commands come from this package through the ``sgam.commands`` entry point group
(pyproject.toml), so ``sgam`` lists them either way; without the extra each says, in one
line, what to install.
"""

from __future__ import annotations

import importlib.util

import typer

EXTRA = "evals"
INSTALL = "pip install -e '.[evals]'"
MODULES: tuple[str, ...] = ("matplotlib",)
"""The modules the extra installs (pyproject.toml's ``evals`` extra, one module each)."""


def missing_modules() -> list[str]:
    """The extra's modules that cannot be imported here."""
    return [module for module in MODULES if absent(module)]


def require_extra(command: str) -> None:
    """Stop ``command`` with one line naming the install command when the extra is missing."""
    absent = missing_modules()
    if absent:
        typer.echo(
            f"error: sgam {command} needs the {EXTRA} extra ({', '.join(absent)} not"
            f" installed): {INSTALL}",
            err=True,
        )
        raise typer.Exit(1)


def absent(module: str) -> bool:
    """Whether ``module`` cannot be imported here (its package, or a parent, is not installed)."""
    try:
        return importlib.util.find_spec(module) is None
    except (ModuleNotFoundError, ValueError):  # a parent package is missing, or a stub
        return True
