"""``sgam bench``'s data at a small size (one tenant, subjects of one shape at every scale,
episodes with model vectors where the reads search and synthetic ones near them elsewhere) and the
server's memory summed over its process tree."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from evals.bench.evidence.corpus import generate_corpus
from evals.bench.profile import cpu_seconds
from evals.bench.served.data import (
    KEYS_PER_SUBJECT,
    TENANT,
    corpus_subjects,
    fact_rows,
    subject_histories,
    subjects_for,
)
from evals.bench.served.load import make_corpus
from evals.bench.served.mixed import machine_busy_seconds, tree_cpu_seconds
from evals.bench.served.server import process_tree, rss_mib
from retrieval.search.embeddings import Embedder


def test_every_scale_holds_subjects_of_about_ten_versions_in_one_tenant(tmp_path: Path) -> None:
    subjects = corpus_subjects(generate_corpus(300), seed=5)

    small, small_rows = subjects_for(subjects, 2_000, seed=5)
    large, large_rows = subjects_for(subjects, 20_000, seed=5)

    # The larger scale has ten times the subjects, each of the same shape: 10k versions are
    # about 1,000 subjects and 1M about 100,000, so their reads compare like with like.
    for count, rows in ((small, small_rows), (large, large_rows)):
        assert 9 <= rows / count <= 11, (count, rows)
    assert 9 <= large / small <= 11
    assert large > len(subjects.names)  # past the corpus's subjects, synthetic ones follow
    for index in (0, large - 1):
        histories = subject_histories(subjects, index, seed=5)
        assert len(histories) == KEYS_PER_SUBJECT
        assert len({history.attribute for history in histories}) == KEYS_PER_SUBJECT
    lines = fact_rows(subjects, 0, large, seed=5, cache_dir=tmp_path).read_text().splitlines()
    assert len(lines) == large_rows
    assert {line.split("\t")[0] for line in lines} == {TENANT}
    per_subject = Counter(line.split("\t")[3] for line in lines)
    assert len(per_subject) == large


def test_the_episodes_searched_get_the_models_vectors_and_the_rest_seeded_ones_near_them(
    tmp_path: Path, embedder: Embedder
) -> None:
    episodes = generate_corpus(120)
    queried = {episodes[0].subject, episodes[7].subject}

    def corpus(folder: str, seed: int = 1) -> np.ndarray:
        made = make_corpus(
            episodes, queried=queried, embedder=embedder, seed=seed, cache_dir=tmp_path / folder
        )
        assert made.episodes == episodes
        assert made.embedded == sum(episode.subject in queried for episode in episodes)
        return np.asarray(made.vectors, dtype=np.float32)

    vectors = corpus("a")

    assert vectors.shape == (120, embedder.dimensions)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=2e-3)
    assert np.array_equal(vectors, corpus("b"))  # the same seed, the same vectors
    assert not np.array_equal(vectors, corpus("c", seed=2))
    searched = [i for i, episode in enumerate(episodes) if episode.subject in queried]
    model = embedder.embed([episodes[i].text for i in searched])
    np.testing.assert_allclose(vectors[searched], model, atol=2e-3)
    others = [i for i in range(120) if i not in searched]
    # Each other episode lies near one of the model's vectors, never on it.
    nearest = (vectors[others] @ model.T).max(axis=1)
    assert float(nearest.min()) > 0.7
    assert float(nearest.max()) < 0.9
    cached = make_corpus(
        episodes, queried=queried, embedder=embedder, seed=1, cache_dir=tmp_path / "a"
    )
    assert cached.vectors_cached


_HOLDS_64_MIB = "import sys; x = b'x' * (64 * 2**20); print(1, flush=True); sys.stdin.read()"
_BURNS_03_S = (
    "import sys, time\nend = time.process_time() + 0.3\n"
    "while time.process_time() < end: pass\nprint(1, flush=True)\nsys.stdin.read()"
)


@contextmanager
def _parent_with_child(child_code: str) -> Iterator[tuple[int, int]]:
    """A parent process that starts a child running ``child_code`` and waits for its first
    line, as a server that encodes in a child does: (parent pid, child pid) until the block
    ends, when both end."""
    parent_code = (
        "import subprocess, sys\n"
        f"child = subprocess.Popen([sys.executable, '-c', {child_code!r}], stdin=subprocess.PIPE,"
        " stdout=subprocess.PIPE)\n"
        "child.stdout.readline()\n"
        "print(child.pid, flush=True)\n"
        "sys.stdin.readline()\n"
        "child.stdin.close()\n"
        "child.wait()\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", parent_code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as parent:
        assert parent.stdin is not None
        assert parent.stdout is not None
        yield parent.pid, int(parent.stdout.readline())
        parent.stdin.close()
        parent.wait(30)


def test_the_servers_memory_is_summed_over_its_process_and_all_descendants() -> None:
    with _parent_with_child(_HOLDS_64_MIB) as (parent, child):
        tree = process_tree(parent)
        whole, alone = rss_mib(parent), rss_mib(child)

    assert tree == [parent, child]
    assert whole["processes"] == 2
    assert alone["processes"] == 1
    assert alone["rss_mib"] >= 64
    assert whole["rss_mib"] >= alone["rss_mib"] + 5  # the parent's interpreter on top
    assert whole["peak_rss_mib"] >= whole["rss_mib"]
    # A process that ended is counted as nothing, not as an error.
    assert rss_mib(parent) == {"rss_mib": 0, "peak_rss_mib": 0, "processes": 0}


def test_the_mixed_loads_cpu_counts_the_servers_child_processes() -> None:
    # The encoder runs in a child of the server: its CPU is the server's under the mixed load.
    with _parent_with_child(_BURNS_03_S) as (parent, child):
        whole, alone, child_alone = (
            tree_cpu_seconds(parent),
            cpu_seconds(parent),
            cpu_seconds(child),
        )

    assert child_alone >= 0.25
    assert whole >= alone + child_alone - 0.02  # clock ticks read a moment apart
    assert tree_cpu_seconds(parent) == 0.0  # the tree is gone: nothing, not an error


def test_the_machines_busy_time_grows_by_at_least_what_a_busy_process_spends() -> None:
    before, own = machine_busy_seconds(), time.process_time()
    end = own + 0.3
    while time.process_time() < end:
        pass

    # Every core's busy time includes this process's; clock ticks are read a moment apart.
    assert machine_busy_seconds() - before >= time.process_time() - own - 0.02
