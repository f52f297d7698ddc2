"""The loads of one evaluation: which memory each system is asked of, and how each is opened.

SGAM and noisy SGAM are a load each, the two descriptive-memory baselines share one, and each
peer arm (``evals.peers``) is a load of its own. Every load gets a database of its own on the
evaluation's server and the same embedding model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from evals.arms.baselines import BaselineOptions, cited_subjects, open_episodes
from evals.arms.systems import SYSTEM_NAMES, Context, Line, Question, open_sgam
from evals.leakage.gold_traces import Trace
from evals.peers import PEER_NAMES
from evals.peers.episodes import PeerMemory
from evals.peers.langgraph_arm import open_langgraph
from evals.peers.mem0_arm import open_mem0
from retrieval.search.embeddings import Embedder
from server.settings import Settings

LoadName = Literal["sgam", "sgam_noisy", "episodes", "langgraph", "mem0"]
Asker = Callable[[Question], Context]
_PEER_OPENERS: dict[LoadName, Callable[..., AbstractContextManager[PeerMemory]]] = {
    "langgraph": open_langgraph,
    "mem0": open_mem0,
}
"""Each arm of ``evals.peers.PEER_NAMES`` and what opens it."""
ALL_SYSTEMS = SYSTEM_NAMES + PEER_NAMES
"""SGAM's systems (the default) and the peer arms of the ``peers`` extra."""


class Memory(Protocol):
    """A loaded memory: takes the trace's writes and counts what became of them."""

    outcomes: Counter[str]

    def write(self, line: Mapping[str, Any], now: str | None) -> None:
        """Apply one write line at its system time."""


@dataclass(frozen=True)
class Load:
    """One load of the memories: which, and the systems asked of it."""

    name: LoadName
    systems: tuple[str, ...]

    @property
    def label(self) -> str:
        """How the report names the load's outcomes."""
        return "dm/dm_recency" if self.name == "episodes" else self.name


def loads_of(systems: Sequence[str]) -> list[Load]:
    """The loads the systems need: SGAM and noisy SGAM one each, the baselines one together,
    each peer arm one."""
    loads = [Load(name, (name,)) for name in ("sgam", "sgam_noisy") if name in systems]
    baselines = tuple(name for name in ("dm", "dm_recency") if name in systems)
    if baselines:
        loads.append(Load("episodes", baselines))
    return loads + [Load(name, (name,)) for name in _PEER_OPENERS if name in systems]


def planned_steps(traces: Sequence[Trace], systems: Sequence[str]) -> int:
    """Steps a run of these traces takes, for a progress bar."""
    return sum(
        trace.writes + trace.questions * len(load.systems)
        for trace in traces
        for load in loads_of(systems)
    )


@contextmanager
def opened(
    load: Load,
    *,
    server: str,
    embedder: Embedder,
    lines: Sequence[Line],
    baseline: BaselineOptions,
    extractor: Settings | None,
) -> Iterator[tuple[Memory, dict[str, Asker]]]:
    """The load's memory on a fresh database of ``server``, and an asker per system of it.

    ``extractor`` applies to the ``sgam`` load and to Mem0's (``infer=True`` on the same
    endpoint and model); LangGraph's store has no extraction of its own. The peer arms take the
    baselines' k.
    """
    if load.name == "episodes":
        with open_episodes(server, embedder=embedder, lines=lines, options=baseline) as episodes:
            askers = {"dm": episodes.dm, "dm_recency": episodes.dm_recency}
            yield episodes, {name: askers[name] for name in load.systems}
    elif load.name in _PEER_OPENERS:
        # A peer's optional packages are imported only when its arm opens.
        opener = _PEER_OPENERS[load.name]
        extracting = {"extractor": extractor} if load.name == "mem0" else {}
        subjects = cited_subjects(lines)
        with opener(
            server, embedder=embedder, subjects=subjects, k=baseline.k, **extracting
        ) as peer:
            yield peer, {load.name: peer.ask}
    else:
        chosen = extractor if load.name == "sgam" else None
        with open_sgam(server, embedder=embedder, extractor=chosen) as sgam:
            yield sgam, {load.name: sgam.ask}


@contextmanager
def torch_threads(count: int | None) -> Iterator[None]:
    """Torch limited to ``count`` threads meanwhile (None: left as it is)."""
    if count is None:
        yield
        return
    import torch  # noqa: PLC0415 - loaded with the model already

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
