"""The extractor: an episode sent to any OpenAI-compatible chat endpoint, candidates back.

The model proposes, the store decides: what it answers goes down the normal write path like any
caller's candidates. The prompt gives it the episode, the subjects' current facts (so it can
say ``update`` with a ``current_value``) and the declared attributes, and asks for structured
output in the ``MemoryUpdate`` JSON Schema. The prompt is versioned (``PROMPT_VERSION``, kept
with each job). A failure is an ``ExtractionFailed`` naming its class (timeout, status code,
malformed answer), never the episode's text or the model's answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

import openai
from openai import OpenAI
from openai.types.chat import ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONSchema

from store.api.extraction import ExtractionInput
from store.contract.facts import MemoryUpdate

PROMPT_VERSION = "extract-v1"

Extract = Callable[[ExtractionInput], list[object]]
"""Anything that turns an episode (with its context) into candidate objects."""

SYSTEM_PROMPT = """\
You extract durable facts from one episode of a conversation or an event log, for a memory \
store. Propose candidates only for the declared attributes listed, each about one subject. \
For each: quote the exact evidence from the episode text; give the subject's id, and in \
subject_name the subject's name exactly as the text writes it, if it does; give the \
value as text in the attribute's value type (date YYYY-MM-DD, datetime RFC 3339 with offset, \
integer, number, boolean true/false, an enum member exactly, json as JSON text); set change to \
"new" when the subject holds no value for the attribute, "update" when it holds another one \
(copy it into current_value), "no_change" when the episode repeats the current value. Set \
valid_from only when the episode says when the value started (RFC 3339 with offset). Mark \
inferences the episode does not state outright with strength "weak". Propose nothing that the \
episode does not support. Answer with an object {"updates": [...]}; an empty list is fine."""


class ExtractionFailed(Exception):
    """An extraction attempt failed; the message names the class of failure, no content."""


def prompt_messages(job: ExtractionInput) -> list[dict[str, str]]:
    """The chat messages for one episode (pure: the same job gives the same prompt)."""
    episode = job.episode
    context = {
        "episode": {
            "id": episode.id,
            "occurred_at": episode.occurred_at.isoformat(),
            "kind": episode.kind,
            "subjects": episode.subjects,
            "text": episode.text,
        },
        "current_facts": [
            {
                "subject": fact.subject,
                "attribute": fact.attribute,
                "value": fact.value if isinstance(fact.value, str) else json.dumps(fact.value),
                "valid_from": fact.valid_from.isoformat(),
            }
            for fact in job.facts
        ],
        "attributes": [
            {
                "name": a.attribute,
                "description": a.description,
                "value_type": a.value_type,
                **({"enum_values": a.enum_values} if a.enum_values else {}),
                **({"aliases": a.aliases} if a.aliases else {}),
            }
            for a in job.attributes
        ],
    }
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": json.dumps(context, ensure_ascii=False)},
    ]


def answer_schema(attribute_names: list[str]) -> dict[str, Any]:
    """The structured-output schema: ``{"updates": [MemoryUpdate, ...]}``, attributes as an
    enum."""
    item = MemoryUpdate.model_json_schema()
    defs = item.pop("$defs", {})
    item["properties"]["attribute"]["enum"] = attribute_names
    defs["MemoryUpdate"] = item
    return {
        "type": "object",
        "properties": {"updates": {"type": "array", "items": {"$ref": "#/$defs/MemoryUpdate"}}},
        "required": ["updates"],
        "additionalProperties": False,
        "$defs": defs,
    }


def parse_answer(content: str | None) -> list[object]:
    """The candidates of a model's answer; ``ExtractionFailed`` when it is not the shape asked
    for (each candidate is still checked by the write path, one result each)."""
    if content is None:
        raise ExtractionFailed("malformed answer: no content")
    try:
        answer = json.loads(content)
    except ValueError:
        raise ExtractionFailed("malformed answer: not JSON") from None
    candidates = answer.get("updates") if isinstance(answer, dict) else None
    if not isinstance(candidates, list):
        raise ExtractionFailed("malformed answer: no updates list")
    return list(candidates)


class Extractor:
    """An OpenAI-compatible chat endpoint (``base_url`` ending e.g. in ``/v1``) and a model."""

    prompt_version = PROMPT_VERSION

    def __init__(
        self, *, base_url: str, model: str, api_key: str | None, timeout_s: float = 60.0
    ) -> None:
        self.model = model
        # The queue retries with its own backoff: the client makes one try per attempt.
        self._client = OpenAI(
            base_url=base_url, api_key=api_key or "unset", timeout=timeout_s, max_retries=0
        )

    def __call__(self, job: ExtractionInput) -> list[object]:
        """The candidates the model proposes for the job's episode."""
        if not job.attributes or job.episode.text is None:
            return []  # nothing could be written: the episode is not sent
        try:
            schema = answer_schema([a.attribute for a in job.attributes])
            completion = self._client.chat.completions.create(
                model=self.model,
                messages=cast(list[ChatCompletionMessageParam], prompt_messages(job)),
                response_format=ResponseFormatJSONSchema(
                    type="json_schema",
                    json_schema={"name": "memory_updates", "schema": schema},
                ),
            )
        except openai.APITimeoutError:
            raise ExtractionFailed("timeout") from None
        except openai.APIStatusError as error:
            raise ExtractionFailed(f"endpoint answered {error.status_code}") from None
        except openai.APIConnectionError:
            raise ExtractionFailed("endpoint unreachable") from None
        except openai.OpenAIError as error:
            raise ExtractionFailed(f"client error: {type(error).__name__}") from None
        if not completion.choices:
            raise ExtractionFailed("malformed answer: no choices")
        return parse_answer(completion.choices[0].message.content)
