"""``/v1/episodes``: record raw episodes with their candidates, read them back, erase them."""

from __future__ import annotations

from litestar import Response, Router, delete, get, post, route
from litestar.enums import HttpMethod
from litestar.handlers import HTTPRouteHandler
from litestar.params import JSONBody
from litestar.types import ControllerRouterHandler

from server.http.metrics import count_results
from server.http.trace import RequestTrace
from server.routes.common import PROBLEM_RESPONSES, PathId, Store, TenantId
from server.routes.extraction import Shared, answer, queued_for, retry_extraction
from store.contract.bodies import (
    CandidateResults,
    CandidatesBody,
    EpisodeBatch,
    EpisodeBatchRecorded,
    EpisodeBody,
    EpisodeRead,
    EpisodeRecorded,
)
from store.contract.memory import EpisodeOutcome, OutcomeInput
from store.contract.results import ErasureResult


@post("/v1/episodes", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def record_episode(
    *,
    store: Store,
    tenant_id: TenantId,
    data: JSONBody[EpisodeBody],
    trace: RequestTrace,
    resources: Shared,
) -> EpisodeRecorded:
    """Record an episode (idempotent on ``id``) and apply its candidates, in one transaction;
    with ``extract``, send it to the extractor (``now``: before answering)."""
    queued = queued_for(data, resources)
    [recorded] = store.episodes.record_with_candidates(
        tenant_id, [(data.episode(), data.updates)], field_prefix="", trace=trace, queue=[queued]
    )
    return answer(store, resources, tenant_id, recorded, queued)


@post("/v1/episodes/batch", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def record_batch(
    *,
    store: Store,
    tenant_id: TenantId,
    data: JSONBody[EpisodeBatch],
    trace: RequestTrace,
    resources: Shared,
) -> EpisodeBatchRecorded:
    """Record several episodes and apply each one's candidates, all in one transaction; those
    with ``extract`` are sent to the extractor (``now``: each before answering)."""
    queue = [
        queued_for(body, resources, field=f"episodes.{n}.extract")
        for n, body in enumerate(data.episodes)
    ]
    recorded = store.episodes.record_with_candidates(
        tenant_id,
        [(body.episode(), body.updates) for body in data.episodes],
        trace=trace,
        queue=queue,
    )
    return EpisodeBatchRecorded(
        episodes=[
            answer(store, resources, tenant_id, item, queued)
            for item, queued in zip(recorded, queue, strict=True)
        ]
    )


@get("/", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def read_episode(*, store: Store, tenant_id: TenantId, episode_id: PathId) -> EpisodeRead:
    """One episode, as citations name it (a stub without text if erased while still cited),
    with its extraction state (null when it was never sent for extraction)."""
    episode = store.episodes.get(tenant_id, episode_id)
    return EpisodeRead(
        **episode.model_dump(), extraction=store.extraction.state(tenant_id, episode_id)
    )


@get("/outcome", sync_to_thread=True, responses=PROBLEM_RESPONSES)
def read_outcome(*, store: Store, tenant_id: TenantId, episode_id: PathId) -> EpisodeOutcome:
    """What came of the episode: its current outcome (404 when none was recorded)."""
    return store.outcomes.current(tenant_id, episode_id)


@post("/outcome", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def record_outcome(
    *,
    store: Store,
    tenant_id: TenantId,
    episode_id: PathId,
    data: JSONBody[OutcomeInput],
    trace: RequestTrace,
) -> EpisodeOutcome:
    """Record what came of the episode: it supersedes the episode's outcome, if any (kept as
    history); the same outcome again changes nothing. An erased episode is 409."""
    return store.outcomes.record(tenant_id, episode_id, data, trace=trace)


@post(
    "/updates",
    status_code=200,
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
)
def apply_candidates(
    *,
    store: Store,
    tenant_id: TenantId,
    episode_id: PathId,
    data: JSONBody[CandidatesBody],
    trace: RequestTrace,
) -> CandidateResults:
    """Candidates from a later extraction of the episode, in one transaction; one result each."""
    results = store.facts.apply_candidates(tenant_id, episode_id, data.candidates, trace=trace)
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


def _allow(*handlers: HTTPRouteHandler) -> dict[str, str]:
    methods = sorted({method for handler in handlers for method in handler.http_methods})
    return {"Allow": ", ".join([*methods, "OPTIONS"])}


_EPISODE_ALLOW = _allow(read_episode, erase_episode)
_OUTCOME_ALLOW = _allow(read_outcome, record_outcome)


@route("/", http_method=HttpMethod.OPTIONS, include_in_schema=False, sync_to_thread=False)
def episode_options() -> Response[None]:
    """The methods of one episode's path (Litestar's own answer, built for the first method
    registered on a path, never lists a method added to it later)."""
    return Response(None, status_code=204, headers=_EPISODE_ALLOW)


@route("/outcome", http_method=HttpMethod.OPTIONS, include_in_schema=False, sync_to_thread=False)
def outcome_options() -> Response[None]:
    """The methods of an episode's outcome path (as ``episode_options``)."""
    return Response(None, status_code=204, headers=_OUTCOME_ALLOW)


# The options handlers come first, so that Litestar does not make its own for these paths.
episode_router = Router(
    "/v1/episodes/{episode_id:str}",
    route_handlers=[
        episode_options,
        outcome_options,
        read_episode,
        read_outcome,
        apply_candidates,
        record_outcome,
        retry_extraction,
        erase_episode,
    ],
)

episode_routes: list[ControllerRouterHandler] = [record_episode, record_batch, episode_router]
