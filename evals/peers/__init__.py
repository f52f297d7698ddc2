"""Other memory systems as arms of the leakage evaluation, installed by the ``peers`` extra.

- ``langgraph``: LangGraph's ``PostgresStore`` with its vector index
  (``evals.peers.langgraph_arm``).
- ``mem0``: Mem0's open-source ``Memory`` on pgvector, adding without an LLM, or with
  ``--extractor`` through its own extraction on SGAM's extractor (``evals.peers.mem0_arm``).

Both are loaded as the descriptive-memory baselines are: the raw episode text, each under the
subjects it was given and those of the candidates citing it, on a database of their own on the
evaluation's PostgreSQL, with the evaluation's embedding model; each hands its top k texts, one
per line, to the same scorer. The packages are optional so that SGAM's own install stays light:
an arm asked for without them is an error naming the install command.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version

from evals.extra import absent

PEER_NAMES = ("langgraph", "mem0")
INSTALL = "pip install -e '.[peers]'"
_MODULES: Mapping[str, tuple[str, ...]] = {
    "langgraph": ("langgraph.store.postgres",),
    "mem0": ("mem0",),
}
DISTRIBUTIONS: Mapping[str, tuple[str, ...]] = {
    "langgraph": ("langgraph", "langgraph-checkpoint-postgres"),
    "mem0": ("mem0ai",),
}
"""The packages each arm runs on, whose versions the report names."""


class PeersMissing(RuntimeError):
    """An arm was asked for whose packages are not installed."""


def missing_peers(names: Iterable[str]) -> list[str]:
    """The arms among ``names`` whose packages cannot be imported here."""
    return [
        name
        for name in names
        if name in _MODULES and any(absent(module) for module in _MODULES[name])
    ]


def installed_peers() -> tuple[str, ...]:
    """The arms whose packages are installed."""
    absent = set(missing_peers(PEER_NAMES))
    return tuple(name for name in PEER_NAMES if name not in absent)


def require_peers(names: Iterable[str]) -> None:
    """Refuse, naming the install command, when an arm of ``names`` is not installed."""
    absent = missing_peers(names)
    if absent:
        arms = " and ".join(absent)
        needs = "arms need" if len(absent) > 1 else "arm needs"
        raise PeersMissing(f"the {arms} {needs} the peers extra: {INSTALL}")


def peer_versions(names: Iterable[str]) -> dict[str, str]:
    """Each arm's packages with their installed versions, in words."""
    described = {}
    for name in names:
        packages = [f"{package} {_version(package)}" for package in DISTRIBUTIONS.get(name, ())]
        if packages:
            described[name] = ", ".join(packages)
    return described


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"
