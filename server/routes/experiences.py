"""``/v1/experiences/search``: past episodes similar to a situation, with what came of them."""

from __future__ import annotations

from litestar import post
from litestar.params import JSONBody

from retrieval.search.experiences import search_experiences
from server.routes.common import PROBLEM_RESPONSES, StoreReader, TenantId
from store.contract.reads import ExperienceRequest, ExperienceResult


@post("/v1/experiences/search", status_code=200, sync_to_thread=True, responses=PROBLEM_RESPONSES)
def search(
    *, reader: StoreReader, tenant_id: TenantId, data: JSONBody[ExperienceRequest]
) -> ExperienceResult:
    """Episodes similar to the situation, best first, each with its outcome; only those with
    an observed outcome are flagged as experience."""
    return search_experiences(reader.store, reader.embedder, tenant_id=tenant_id, request=data)


experience_routes = [search]
