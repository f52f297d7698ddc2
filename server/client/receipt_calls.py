"""The routes of receipts and memory health as calls: a decision's receipts, the classifier.

Each returns a ``server.client.call.Call``: nothing here touches the network.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from server.client.call import Call, jsonable, url_path
from store.contract.health import ClassifyResult, Expectation
from store.contract.receipts import DecisionReceipts


def decision_receipts(decision_id: UUID | str) -> Call[DecisionReceipts]:
    """The decision's content-free receipts, oldest first (NotFound: no such decision)."""
    path = url_path("/v1/decisions/{}/receipts", decision_id)
    return Call("GET", path, DecisionReceipts.model_validate_json)


def classify_health(
    expectations: Sequence[Expectation | Mapping[str, Any]],
) -> Call[ClassifyResult]:
    """One memory-health verdict per expectation, judged from the tenant's receipts."""
    body = {"expectations": [jsonable(item) for item in expectations]}
    return Call("POST", "/v1/health/classify", ClassifyResult.model_validate_json, body=body)
