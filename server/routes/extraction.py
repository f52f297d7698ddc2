"""Extraction on request: an episode body's ``extract``, and the dead-letter retry route.

``extract: background`` queues the episode for a worker; ``extract: now`` queues it already
leased by the request, which then calls the extractor and writes what it proposes before
answering (the results take effect for the very next read). A failed ``now`` attempt leaves
the job ``failed``, retried by a worker like any other. Without a configured extractor,
anything but ``none`` is refused: 409 ``conflict`` naming ``extract`` (the request is valid;
this server's configuration cannot serve it), and nothing is recorded.
"""

from __future__ import annotations

from uuid import uuid4

from litestar import post
from litestar.di import NamedDependency
from litestar.params import SkipValidation

from extraction.extractor import PROMPT_VERSION
from extraction.jobs import run_job
from server.extraction.worker import METRICS
from server.http.metrics import count_results
from server.routes.common import PROBLEM_RESPONSES, PathId, Store, TenantId
from server.runtime.resources import Resources
from store.contract.bodies import EpisodeBody, EpisodeRecorded
from store.contract.episodes import Episode
from store.contract.memory import ExtractionState
from store.contract.results import UpdateResult
from store.episodes.extraction import Claim, Queued
from store.errors import Conflict

Shared = NamedDependency[SkipValidation[Resources]]
"""The running app's resources (the extractor and the worker policy among them)."""


def queued_for(body: EpisodeBody, resources: Resources, *, field: str = "extract") -> Queued | None:
    """How the episode is to be queued for extraction, None when it is not sent."""
    if body.extract == "none":
        return None
    if resources.extractor is None:
        raise Conflict(
            "no extractor is configured (SGAM_EXTRACTOR_URL): extract must be none", field=field
        )
    lease_id = uuid4() if body.extract == "now" else None
    return Queued(PROMPT_VERSION, lease_id=lease_id, lease=resources.policy.lease)


def answer(
    store: Store,
    resources: Resources,
    tenant_id: str,
    recorded: tuple[Episode, list[UpdateResult]],
    queued: Queued | None,
) -> EpisodeRecorded:
    """The answer for one recorded episode: extracted first when it asked for ``now``."""
    episode, results = recorded
    count_results(results)
    extracted: list[UpdateResult] = []
    state: ExtractionState | None = None
    if queued is not None:
        if queued.lease_id is not None and resources.extractor is not None:
            job = Claim(tenant_id, episode.id, queued.lease_id)
            extracted = run_job(store, resources.extractor, job, resources.policy, METRICS) or []
        state = store.extraction.state(tenant_id, episode.id)
    if extracted:
        # What was extracted may be about subjects the episode did not name: they are its own
        # now, and the answer shows them as a read of the episode does.
        episode = store.episodes.get(tenant_id, episode.id)
    return EpisodeRecorded(
        **episode.model_dump(), results=results, extraction=state, extracted=extracted
    )


@post("/extraction/retry", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def retry_extraction(*, store: Store, tenant_id: TenantId, episode_id: PathId) -> ExtractionState:
    """Requeue the episode's dead extraction (attempts start again): 404 for an unknown
    episode, 409 when its extraction is not dead or it was never sent."""
    return store.extraction.retry(tenant_id, episode_id)
