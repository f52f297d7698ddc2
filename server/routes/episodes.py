"""``/v1/episodes``: record raw episodes with their candidates, read them back, erase them."""

from __future__ import annotations

from litestar import Response, Router, delete, get, post, route
from litestar.enums import HttpMethod
from litestar.params import JSONBody
from litestar.types import ControllerRouterHandler

from server.bodies import (
    CandidateResults,
    CandidatesBody,
    EpisodeBatch,
    EpisodeBatchRecorded,
    EpisodeBody,
    EpisodeRecorded,
)
from server.metrics import count_results
from server.routes.common import PROBLEM_RESPONSES, PathId, Store, TenantId
from store.models import Episode
from store.results import ErasureResult, UpdateResult


def _recorded(episode: Episode, results: list[UpdateResult]) -> EpisodeRecorded:
    count_results(results)
    return EpisodeRecorded(**episode.model_dump(), results=results)


@post("/v1/episodes", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def record_episode(
    *, store: Store, tenant_id: TenantId, data: JSONBody[EpisodeBody]
) -> EpisodeRecorded:
    """Record an episode (idempotent on ``id``) and apply its candidates, in one transaction."""
    [(episode, results)] = store.episodes.record_with_updates(
        tenant_id, [(data.episode(), data.updates)], field_prefix=""
    )
    return _recorded(episode, results)


@post("/v1/episodes/batch", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def record_batch(
    *, store: Store, tenant_id: TenantId, data: JSONBody[EpisodeBatch]
) -> EpisodeBatchRecorded:
    """Record several episodes and apply each one's candidates, all in one transaction."""
    recorded = store.episodes.record_with_updates(
        tenant_id, [(body.episode(), body.updates) for body in data.episodes]
    )
    return EpisodeBatchRecorded(
        episodes=[_recorded(episode, results) for episode, results in recorded]
    )


@get("/", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def read_episode(*, store: Store, tenant_id: TenantId, episode_id: PathId) -> Episode:
    """One episode, as citations name it (a stub without text if erased while still cited)."""
    return store.episodes.get(tenant_id, episode_id)


@post(
    "/updates",
    status_code=200,
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
)
def apply_updates(
    *, store: Store, tenant_id: TenantId, episode_id: PathId, data: JSONBody[CandidatesBody]
) -> CandidateResults:
    """Candidates from a later extraction of the episode, in one transaction; one result each."""
    results = store.facts.apply_updates(tenant_id, episode_id, data.candidates)
    count_results(results)
    return CandidateResults(results=results)


@delete(
    "/",
    status_code=200,
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
)
def erase_episode(*, store: Store, tenant_id: TenantId, episode_id: PathId) -> ErasureResult:
    """Erase an episode: retract what it sourced, delete it, leave a content-free tombstone."""
    return store.erasure.erase_episode(tenant_id, episode_id)


_EPISODE_METHODS = ", ".join(sorted({*read_episode.http_methods, *erase_episode.http_methods}))


@route("/", http_method=HttpMethod.OPTIONS, include_in_schema=False, sync_to_thread=False)
def episode_options() -> Response[None]:
    """The methods of one episode's path (Litestar's own answer, built for the first method
    registered on a path, never lists a method added to it later)."""
    return Response(None, status_code=204, headers={"Allow": f"{_EPISODE_METHODS}, OPTIONS"})


# The options handler comes first, so that Litestar does not make its own for this path.
episode_router = Router(
    "/v1/episodes/{episode_id:str}",
    route_handlers=[episode_options, read_episode, apply_updates, erase_episode],
)

episode_routes: list[ControllerRouterHandler] = [record_episode, record_batch, episode_router]
