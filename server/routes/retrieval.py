"""``/v1/evidence/search``, ``/v1/context`` and ``/v1/experiences/search``: cited evidence, the
smallest cited block, and past episodes similar to a situation with what came of them."""

from __future__ import annotations

from litestar import post
from litestar.params import JSONBody

from retrieval.search.experiences import search_experiences
from server.http.metrics import CONTEXT_ASSEMBLIES, EVIDENCE_SEARCHES
from server.http.trace import RequestTrace
from server.routes.common import PROBLEM_RESPONSES, StoreReader, TenantId
from store.contract.reads import (
    ContextRequest,
    ContextResult,
    ExperienceRequest,
    ExperienceResult,
    SearchRequest,
    SearchResult,
)


@post("/v1/evidence/search", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def search_evidence(
    *, reader: StoreReader, tenant_id: TenantId, data: JSONBody[SearchRequest]
) -> SearchResult:
    """Episodes similar to the query, best first, each cited by id (supporting evidence only)."""
    result = reader.search(tenant_id, data)
    EVIDENCE_SEARCHES.inc()
    return result


@post("/v1/context", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def context(
    *, reader: StoreReader, tenant_id: TenantId, data: JSONBody[ContextRequest], trace: RequestTrace
) -> ContextResult:
    """The smallest cited block answering the question: exact facts first, then evidence.

    The call opens a decision (``X-SGAM-Decision``'s, or a new one: ``decision_id``) and
    leaves a content-free receipt for every key and episode it read.
    """
    result = reader.context(tenant_id, data, trace=trace)
    CONTEXT_ASSEMBLIES.labels(str(result.over_budget).lower()).inc()
    return result


@post("/v1/experiences/search", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def search(
    *, reader: StoreReader, tenant_id: TenantId, data: JSONBody[ExperienceRequest]
) -> ExperienceResult:
    """Episodes similar to the situation, best first, each with its outcome; only those with
    an observed outcome are flagged as experience."""
    return search_experiences(reader.store, reader.embedder, tenant_id=tenant_id, request=data)


retrieval_routes = [search_evidence, context, search]
