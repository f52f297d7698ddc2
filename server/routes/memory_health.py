"""``/v1/health/classify``: memory health, judged from the tenant's own receipts.

Expectations go in (the decision, the memory it needed, its scope and freshness budget, the
task's outcome); one verdict each comes out, from ``retrieval.memory_health``'s classifier.
Evidence the server cannot read (the database is down) is UNKNOWN, never healthy.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from litestar import post
from litestar.params import JSONBody

from retrieval.memory_health.classifier import classify_all
from server.routes.common import PROBLEM_RESPONSES, Store, TenantId
from store.contract.health import ClassifyRequest, ClassifyResult, Evidence, Expectation
from store.errors import DatabaseUnavailable
from store.service import MemoryStore

_log = logging.getLogger(__name__)


@post(
    "/v1/health/classify",
    status_code=200,
    sync_to_thread=True,
    responses=PROBLEM_RESPONSES,
    tags=["receipts"],
)
def classify(
    *, store: Store, tenant_id: TenantId, data: JSONBody[ClassifyRequest]
) -> ClassifyResult:
    """Judge each expectation against the tenant's receipts: the first failing layer's verdict
    (available, written, read, scope, freshness, provenance, activated, the type's invariant)
    and the operating state it makes with the task's outcome."""
    return judge(store, tenant_id, data.expectations)


def judge(
    store: MemoryStore, tenant_id: str, expectations: Sequence[Expectation]
) -> ClassifyResult:
    """Each expectation's verdict from the tenant's receipts (the API's and the pages' call);
    when the database cannot be read, every verdict is UNKNOWN."""
    try:
        evidence = store.receipts.evidence(
            tenant_id,
            decision_ids=sorted({item.decision_id for item in expectations}),
            memories=[item.memory for item in expectations],
        )
    except DatabaseUnavailable:
        _log.warning("memory health judged without evidence: the database is unavailable")
        evidence = Evidence(available=False, receipts=[])
    verdicts = classify_all(expectations, evidence, tenant_id=tenant_id)
    return ClassifyResult(verdicts=verdicts, evidence_available=evidence.available)


memory_health_routes = [classify]
