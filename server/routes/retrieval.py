"""``/v1/evidence/search`` and ``/v1/context``: cited evidence and the smallest cited block."""

from __future__ import annotations

from typing import Any

from litestar import Request, post
from litestar.params import JSONBody

from retrieval.models import ContextRequest, ContextResult, SearchRequest, SearchResult
from server.metrics import CONTEXT_ASSEMBLIES, EVIDENCE_SEARCHES
from server.resources import resources_of
from server.routes.common import PROBLEM_RESPONSES, store_of, tenant_of


@post("/v1/evidence/search", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def search_evidence(request: Request[Any, Any, Any], data: JSONBody[SearchRequest]) -> SearchResult:
    """Episodes similar to the query, best first, each cited by id (supporting evidence only)."""
    store = store_of(request)
    tenant_id = tenant_of(request)
    resources = resources_of(request.app)
    result = resources.reader(store).search(tenant_id, data)
    EVIDENCE_SEARCHES.inc()
    return result


@post("/v1/context", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def context(request: Request[Any, Any, Any], data: JSONBody[ContextRequest]) -> ContextResult:
    """The smallest cited block answering the question: exact facts first, then evidence."""
    store = store_of(request)
    tenant_id = tenant_of(request)
    resources = resources_of(request.app)
    result = resources.reader(store).context(tenant_id, data)
    CONTEXT_ASSEMBLIES.labels(str(result.over_budget).lower()).inc()
    return result


retrieval_routes = [search_evidence, context]
